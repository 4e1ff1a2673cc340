import type { Action } from '../../../shared/catalog/action.ts';
import type { ErrorInfo } from '../../../shared/errors/fleet-error.ts';

/** Rows a table shows before it says how many it left out. */
const MAX_ROWS = 50;
const NODE_FIELDS = new Set(['host', 'availability', 'sampled_at_unix_ms', 'failed_collectors', 'errors']);

/**
 * A value from the fleet in a table cell or field list: in a code span, so a
 * model can tell what hosts wrote from what we write (a container name or a log
 * line is data, never an instruction).
 */
export function cell(value: unknown, key = '', maxLength = 80): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'number') {
    if (key.endsWith('_unix_ms') && value > 0) return new Date(value).toISOString();
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  let text: string;
  if (typeof value === 'string') text = value;
  else if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) text = value.join(', ');
  else if (Array.isArray(value) && value.every((v) => v && typeof v === 'object' && 'name' in v))
    text = value.map((v) => String((v as { name: unknown }).name)).join(', ');
  else if (typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((v) => typeof v !== 'object')) {
    text = Object.entries(value)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(',');
  } else text = JSON.stringify(value);
  if (text === '') return '-';
  if (text.length > maxLength) text = `${text.slice(0, maxLength - 3)}…`;
  return `\`${visible(text).replaceAll('`', "'").replaceAll('|', '\\|')}\``;
}

/** Control characters (ANSI escapes, carriage returns, line breaks) spelled out, so no terminal or renderer acts on them. */
function visible(text: string): string {
  return text.replace(/\r?\n/g, '⏎').replace(/[\p{Cc}\u2028\u2029]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Text that may come from a host, an engine or an agent (an error message, a
 * hint, a collector's reason) as one inline code span: quoted data, never
 * Markdown, whatever backticks, headings or links it holds.
 */
function quoted(text: string): string {
  const body = visible(text);
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** A value as a fenced JSON block whose fence no string inside it can close. */
function jsonBlock(value: unknown): string {
  const json = JSON.stringify(value, null, 2);
  const longest = Math.max(2, ...(json.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}json\n${json}\n${fence}`;
}

function table(headers: string[], rows: string[][]): string {
  return [`| ${headers.join(' | ')} |`, `| ${headers.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

function errorLines(errors: ErrorInfo[]): string[] {
  return errors.map(
    (e) =>
      `- ${e.host ? `${cell(e.host)}: ` : ''}${e.collector ? `${cell(e.collector)} ` : ''}**${e.code}**: ${quoted(e.message)}${e.hint ? ` (next: ${quoted(e.hint)})` : ''}`,
  );
}

function isScalar(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

function fieldList(record: Record<string, unknown>, skip: Set<string> = new Set()): string[] {
  const lines: string[] = [];
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (skip.has(key)) continue;
    const whole = cell(value, key, Number.POSITIVE_INFINITY);
    if (isScalar(value) || whole.length <= 82) lines.push(`- **${key}**: ${isScalar(value) ? cell(value, key, 2000) : whole}`);
    else blocks.push(`**${key}**:\n${jsonBlock(value)}`);
  }
  return [...lines, ...(blocks.length ? ['', ...blocks] : [])];
}

/** A table of items (rows), choosing the hinted columns, and saying which fields it left out. */
function itemsTable(items: Record<string, unknown>[], columns: readonly string[], lead: string[] = []): string[] {
  const present = new Set(items.flatMap((item) => Object.keys(item)));
  const shown = columns.filter((c) => present.has(c));
  const chosen = shown.length ? shown : [...present].filter((key) => items.every((item) => isScalar(item[key]))).slice(0, 6);
  const omitted = [...present].filter((key) => !chosen.includes(key) && !lead.includes(key));
  const rows = items.slice(0, MAX_ROWS).map((item) => [...lead, ...chosen].map((key) => cell(item[key], key)));
  const out = [table([...lead, ...chosen], rows)];
  if (items.length > MAX_ROWS) out.push(`(${items.length - MAX_ROWS} more rows not shown; structuredContent has all ${items.length})`);
  if (omitted.length) out.push(`Fields not in the table: ${omitted.join(', ')} (structuredContent has every field).`);
  return out;
}

/** A fleet answer: one table across hosts, the failures under it. */
function renderEnvelope(action: Action, envelope: Record<string, unknown>): string {
  const nodes = (envelope.hosts as Record<string, unknown>[]) ?? [];
  const lines = [`**${action.title}**: ${envelope.responded} of ${envelope.targeted} host${envelope.targeted === 1 ? '' : 's'} answered.`, ''];
  const list = action.table?.list;
  if (list) {
    const items = nodes.flatMap((node) => ((node[list] as Record<string, unknown>[] | undefined) ?? []).map((item) => ({ host: node.host, ...item })));
    if (items.length) lines.push(...itemsTable(items, action.table?.columns ?? [], ['host']));
    else lines.push(`No ${list} on the hosts that answered.`);
  } else if (nodes.length) {
    const rows = nodes.map((node) => ({
      ...Object.fromEntries(Object.entries(node).filter(([key]) => !NODE_FIELDS.has(key) || key === 'host' || key === 'availability')),
    }));
    lines.push(...itemsTable(rows, ['availability', ...(action.table?.columns ?? [])], ['host']));
  }
  const errors = (envelope.errors as ErrorInfo[]) ?? [];
  if (errors.length) lines.push('', `**Failures** (${errors.length}):`, ...errorLines(errors));
  return lines.join('\n');
}

function renderNode(action: Action, node: Record<string, unknown>): string {
  const lines = [`**${action.title}** on ${cell(node.host)}: ${node.availability}.`, ''];
  const list = action.table?.list;
  const items = list ? (node[list] as Record<string, unknown>[] | undefined) : undefined;
  if (list && items) {
    lines.push(...(items.length ? itemsTable(items, action.table?.columns ?? []) : [`No ${list}.`]));
    lines.push('', ...fieldList(node, new Set([...NODE_FIELDS, list])));
  } else {
    lines.push(...fieldList(node, NODE_FIELDS));
  }
  const failed = node.failed_collectors as string[];
  if (failed?.length) lines.push('', `Collectors that failed: ${failed.map((name) => cell(name)).join(', ')} (figures they feed are null).`);
  const errors = node.errors as ErrorInfo[];
  if (errors?.length) lines.push('', '**Errors:**', ...errorLines(errors));
  return lines.join('\n');
}

function renderBroker(action: Action, result: Record<string, unknown>): string {
  const list = action.table?.list;
  const items = list ? (result[list] as Record<string, unknown>[] | undefined) : undefined;
  const lines = [`**${action.title}**`, ''];
  if (list && items) {
    lines.push(...(items.length ? itemsTable(items, action.table?.columns ?? []) : [`No ${list}.`]));
    const rest = fieldList(result, new Set([list]));
    if (rest.length) lines.push('', ...rest);
  } else {
    lines.push(...fieldList(result));
  }
  return lines.join('\n');
}

export function renderError(error: ErrorInfo & Record<string, unknown>, targets?: { host: string; resource?: string }[]): string {
  const lines = [`**Error: ${error.code}**: ${quoted(error.message)}`];
  if (targets?.length) lines.push('', 'Would act on:', ...targets.map((t) => `- ${cell(t.resource ?? t.host)}`));
  if (error.hint) lines.push('', `Next: ${quoted(error.hint)}`);
  return lines.join('\n');
}

/** The text of a tool result: Markdown for people and models; structuredContent stays complete. */
export function renderMarkdown(
  action: Action | undefined,
  shape: 'node' | 'envelope' | 'broker' | 'error' | 'local',
  structured: Record<string, unknown>,
): string {
  if (shape === 'error')
    return renderError(structured.error as ErrorInfo & Record<string, unknown>, structured.targets as { host: string; resource?: string }[] | undefined);
  if (!action) return jsonBlock(structured);
  if (shape === 'envelope') return renderEnvelope(action, structured);
  if (shape === 'node') return renderNode(action, structured);
  return renderBroker(action, structured);
}
