/**
 * A renderer for the small subset of Helm's Go templates that charts/fleetmesh
 * uses, since no Helm binary can be installed here: text, `{{ pipeline }}`,
 * `{{ if pipeline }}…{{ else }}…{{ end }}`, template comments, the trim
 * markers `{{-` and `-}}`, fields (`.Values.a.b`, `.Release.Name`,
 * `.Chart.AppVersion`), string and number literals, pipelines, and the
 * functions in FUNCTIONS. Anything else throws, so the chart cannot drift out
 * of what this checks without a test failing. It follows Go's rules where the
 * chart depends on them (emptiness, trimming, pipeline argument order); it is
 * not Helm, and does not claim to render every chart as Helm would.
 */
import { stringify } from 'yaml';

export interface ChartContext {
  Values: Record<string, unknown>;
  Release: { Name: string; Namespace: string; Service: string };
  Chart: { Name: string; Version: string; AppVersion: string };
}

type Node = { kind: 'text'; text: string } | { kind: 'output'; pipeline: string } | { kind: 'if'; pipeline: string; whenTrue: Node[]; otherwise: Node[] };

/** Go's notion of empty: what `if` treats as false and `default` replaces. */
function empty(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

function indentLines(text: string, spaces: number): string {
  const pad = ' '.repeat(spaces);
  return text
    .split('\n')
    .map((line) => pad + line)
    .join('\n');
}

const FUNCTIONS: Record<string, (...args: unknown[]) => unknown> = {
  not: (value) => empty(value),
  // Go's or: the first argument that is not empty, else the last.
  or: (...values) => values.find((value) => !empty(value)) ?? values[values.length - 1],
  default: (fallback, value) => (empty(value) ? fallback : value),
  required: (message, value) => {
    if (value === undefined || value === null || value === '') throw new Error(String(message));
    return value;
  },
  quote: (value) => JSON.stringify(value === undefined || value === null ? '' : String(value)),
  b64enc: (value) => Buffer.from(String(value)).toString('base64'),
  toYaml: (value) => stringify(value).trimEnd(),
  nindent: (spaces, text) => `\n${indentLines(String(text), Number(spaces))}`,
  indent: (spaces, text) => indentLines(String(text), Number(spaces)),
};

/** Splits on a separator outside double-quoted strings. */
function splitOutsideQuotes(text: string, separator: RegExp): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '"' && text[i - 1] !== '\\') quoted = !quoted;
    if (!quoted && separator.test(char)) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (quoted) throw new Error(`unterminated string in "${text}"`);
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

function operand(token: string, context: ChartContext): unknown {
  if (token.startsWith('"')) return JSON.parse(token) as string;
  if (/^-?\d+$/.test(token)) return Number(token);
  if (token === 'true' || token === 'false') return token === 'true';
  if (/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(token)) {
    let value: unknown = context;
    for (const key of token.slice(1).split('.')) {
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
    return value;
  }
  throw new Error(`unsupported operand "${token}"`);
}

function evaluate(pipeline: string, context: ChartContext): unknown {
  let result: unknown;
  splitOutsideQuotes(pipeline, /\|/).forEach((command, index) => {
    const [head = '', ...rest] = splitOutsideQuotes(command, /\s/);
    const piped = index === 0 ? [] : [result];
    if (/^[a-zA-Z][a-zA-Z0-9]*$/.test(head) && head !== 'true' && head !== 'false') {
      const fn = FUNCTIONS[head];
      if (!fn) throw new Error(`unsupported function "${head}"`);
      result = fn(...rest.map((token) => operand(token, context)), ...piped);
    } else {
      if (rest.length || index > 0) throw new Error(`unsupported command "${command}"`);
      result = operand(head, context);
    }
  });
  return result;
}

function parse(source: string): Node[] {
  const root: Node[] = [];
  const stack: { nodes: Node[]; node?: Extract<Node, { kind: 'if' }>; inElse?: boolean }[] = [{ nodes: root }];
  const pattern = /\{\{(-\s)?(.*?)(\s-)?\}\}/gs;
  let last = 0;
  let trimNext = false;
  const top = () => stack[stack.length - 1] as (typeof stack)[number];
  for (const match of source.matchAll(pattern)) {
    let text = source.slice(last, match.index);
    if (trimNext) text = text.replace(/^\s+/, '');
    if (match[1]) text = text.replace(/\s+$/, '');
    if (text) top().nodes.push({ kind: 'text', text });
    last = (match.index ?? 0) + match[0].length;
    trimNext = Boolean(match[3]);
    const action = (match[2] ?? '').trim();
    if (action.startsWith('/*')) {
      if (!action.endsWith('*/')) throw new Error(`unterminated comment: ${action}`);
    } else if (action.startsWith('if ')) {
      const node: Extract<Node, { kind: 'if' }> = { kind: 'if', pipeline: action.slice(3), whenTrue: [], otherwise: [] };
      top().nodes.push(node);
      stack.push({ nodes: node.whenTrue, node });
    } else if (action === 'else') {
      const frame = top();
      if (!frame.node || frame.inElse) throw new Error('else without if');
      stack.pop();
      stack.push({ nodes: frame.node.otherwise, node: frame.node, inElse: true });
    } else if (action === 'end') {
      if (stack.length === 1) throw new Error('end without if');
      stack.pop();
    } else if (/^(range|with|define|template|include|block|else if)\b/.test(action) || /:?=/.test(action.replace(/"[^"]*"/g, ''))) {
      throw new Error(`unsupported action "{{ ${action} }}"`);
    } else {
      top().nodes.push({ kind: 'output', pipeline: action });
    }
  }
  if (stack.length !== 1) throw new Error('if without end');
  let tail = source.slice(last);
  if (trimNext) tail = tail.replace(/^\s+/, '');
  if (tail) root.push({ kind: 'text', text: tail });
  return root;
}

function renderNodes(nodes: Node[], context: ChartContext): string {
  return nodes
    .map((node) => {
      if (node.kind === 'text') return node.text;
      if (node.kind === 'if') return renderNodes(empty(evaluate(node.pipeline, context)) ? node.otherwise : node.whenTrue, context);
      const value = evaluate(node.pipeline, context);
      if (value === undefined || value === null) throw new Error(`{{ ${node.pipeline} }} has no value`);
      if (typeof value === 'object') throw new Error(`{{ ${node.pipeline} }} is a map or list: render it with toYaml`);
      return String(value);
    })
    .join('');
}

export function renderTemplate(source: string, context: ChartContext): string {
  return renderNodes(parse(source), context);
}

/** Every `.Values` path a template reads, such as `broker.persistence.size`. */
export function valuePaths(source: string): string[] {
  return [...new Set([...source.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)].map((match) => (match[1] ?? '').slice(1)))];
}
