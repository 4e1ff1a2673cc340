import type { Action, TableHint } from '../../../shared/catalog/action.ts';
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

/** A column's value: a field, or a field of a field (`state.status`). */
function valueAt(item: Record<string, unknown>, column: string): unknown {
  return column.split('.').reduce<unknown>((value, key) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), item);
}

/**
 * A table of items (rows), choosing the hinted columns, and saying which fields
 * and rows it left out. `shown` are the rows it has room for, when something
 * chose them already (the newest of a log); otherwise the first ones.
 */
function itemsTable(
  items: Record<string, unknown>[],
  columns: readonly string[],
  lead: string[] = [],
  tail?: TableHint['tail'],
  shown: Record<string, unknown>[] = tail ? items.slice(-MAX_ROWS) : items.slice(0, MAX_ROWS),
): string[] {
  const present = new Set(items.flatMap((item) => Object.keys(item)));
  const hinted = columns.filter((c) => !lead.includes(c) && items.some((item) => valueAt(item, c) !== undefined));
  const chosen = hinted.length ? hinted : [...present].filter((key) => !lead.includes(key) && items.every((item) => isScalar(item[key]))).slice(0, 6);
  const omitted = [...present].filter((key) => !lead.includes(key) && !chosen.some((c) => c === key || c.startsWith(`${key}.`)));
  const rows = shown.map((item) => [...lead, ...chosen].map((key) => cell(valueAt(item, key), key)));
  const out = [table([...lead, ...chosen], rows)];
  const left = items.length - shown.length;
  if (left > 0 && tail) {
    out.unshift(
      `(${left} older rows not shown, the newest ${shown.length} are; structuredContent has all ${items.length}; to read older ones here, ${tail.readOlder})`,
    );
  } else if (left > 0) out.push(`(${left} more rows not shown; structuredContent has all ${items.length})`);
  if (omitted.length) out.push(`Fields not in the table: ${omitted.join(', ')} (structuredContent has every field).`);
  return out;
}

/** The last rows of each list, sharing `limit` rows among the lists as evenly as they allow, in list order. */
function newestOfEach<T>(lists: T[][], limit: number): T[] {
  const kept = lists.map(() => 0);
  let room = limit;
  while (room > 0 && lists.some((list, i) => list.length > (kept[i] ?? 0))) {
    lists.forEach((list, i) => {
      if (room > 0 && list.length > (kept[i] ?? 0)) {
        kept[i] = (kept[i] ?? 0) + 1;
        room -= 1;
      }
    });
  }
  return lists.flatMap((list, i) => list.slice(list.length - (kept[i] ?? 0)));
}

/** Codes that mean a host gave no answer of its own; any other error is the host's answer. */
const SILENT_CODES = new Set(['agent_offline', 'agent_disconnected', 'deadline_exceeded']);

/** How the targeted hosts answered: with a result, with an error of their own, or not at all. */
function answeredLine(targeted: number, nodes: Record<string, unknown>[]): string {
  const failed = nodes.filter((node) => node.availability === 'unavailable');
  const silent = failed.filter((node) => SILENT_CODES.has(((node.errors as ErrorInfo[] | undefined) ?? [])[0]?.code ?? '')).length;
  const refused = failed.length - silent;
  const parts = [`${targeted - failed.length} of ${targeted} host${targeted === 1 ? '' : 's'} answered with a result`];
  if (refused) parts.push(`${refused} answered with an error`);
  if (silent) parts.push(`${silent} did not answer`);
  return `${parts.join('; ')}.`;
}

/** A fleet answer: one table across hosts, the failures under it. */
function renderEnvelope(action: Action, envelope: Record<string, unknown>): string {
  const nodes = (envelope.hosts as Record<string, unknown>[]) ?? [];
  const lines = [`**${action.title}**: ${answeredLine(envelope.targeted as number, nodes)}`, ''];
  const list = action.table?.list;
  if (list) {
    const perHost = nodes.map((node) => ((node[list] as Record<string, unknown>[] | undefined) ?? []).map((item) => ({ host: node.host, ...item })));
    const items = perHost.flat();
    const tail = action.table?.tail;
    // A log's table keeps the newest rows of every host, not the end of the last host's.
    const shown = tail ? newestOfEach(perHost, MAX_ROWS) : undefined;
    if (items.length) lines.push(...itemsTable(items, action.table?.columns ?? [], ['host'], tail, shown));
    else lines.push(`No ${list} on the hosts that answered.`);
  } else if (nodes.length) {
    const rows = nodes.map((node) => ({
      ...Object.fromEntries(Object.entries(node).filter(([key]) => !NODE_FIELDS.has(key) || key === 'host' || key === 'availability')),
    }));
    lines.push(...itemsTable(rows, action.table?.columns ?? [], ['host', 'availability']));
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
    lines.push(...(items.length ? itemsTable(items, action.table?.columns ?? [], [], action.table?.tail) : [`No ${list}.`]));
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
    lines.push(...(items.length ? itemsTable(items, action.table?.columns ?? [], [], action.table?.tail) : [`No ${list}.`]));
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
