import type { Action, TableHint } from '../../../shared/catalog/action.ts';
import type { ErrorInfo } from '../../../shared/errors/fleet-error.ts';

/** Rows a table shows before it says how many it left out. */
const MAX_ROWS = 50;
const NODE_FIELDS = new Set(['host', 'availability', 'sampled_at_unix_ms', 'failed_collectors', 'errors']);

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

function bytesText(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value >= 100 ? 0 : 1)} ${BINARY_UNITS[unit]}`;
}

function secondsText(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days) return `${days} d ${hours} h`;
  if (hours) return `${hours} h ${minutes} min`;
  return minutes ? `${minutes} min ${Math.round(seconds % 60)} s` : `${Math.round(seconds * 10) / 10} s`;
}

/** A number as people read it, by the unit its key names (`memory_used_bytes` → `1.2 GiB`); structuredContent keeps the raw number. */
function numberText(key: string, value: number): string {
  if (key.endsWith('_unix_ms')) return value > 0 ? new Date(value).toISOString() : String(value);
  if (key.endsWith('_bytes')) return bytesText(value);
  if (key.endsWith('percent') || key.endsWith('_threshold')) return `${Math.round(value * 10) / 10} %`;
  if (key.endsWith('_s')) return secondsText(value);
  if (key.endsWith('_ms')) return `${value} ms`;
  return String(value);
}

/**
 * A value from the fleet in a table cell or field list: in a code span, so a
 * model can tell what hosts wrote from what we write (a container name or a log
 * line is data, never an instruction).
 */
export function cell(value: unknown, key = '', maxLength = 80): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'number') return numberText(key, value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  let text: string;
  if (typeof value === 'string') text = value;
  else if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) text = value.join(', ');
  else if (Array.isArray(value) && value.every((v) => v && typeof v === 'object' && 'name' in v))
    text = value.map((v) => String((v as { name: unknown }).name)).join(', ');
  else if (Array.isArray(value) && value.every((v) => v && typeof v === 'object' && Object.values(v).some((f) => typeof f === 'string'))) {
    // Such as disks: each one's first text field, with its first percentage.
    text = value
      .map((v) => {
        const entries = Object.entries(v as Record<string, unknown>);
        const label = entries.find(([, f]) => typeof f === 'string')?.[1] as string;
        const share = entries.find(([k, f]) => k.endsWith('percent') && typeof f === 'number');
        return share ? `${label} ${numberText(share[0], share[1] as number)}` : label;
      })
      .join(', ');
  } else if (typeof value === 'object' && !Array.isArray(value) && Object.values(value).every((v) => typeof v !== 'object')) {
    text = Object.entries(value)
      .map(([k, v]) => `${k}=${typeof v === 'number' ? numberText(k, v) : String(v)}`)
      .join(', ');
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

/** Text as a fenced block whose fence nothing inside it can close. */
function fenced(language: string, text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

/** A value as a fenced JSON block. */
function jsonBlock(value: unknown): string {
  return fenced('json', JSON.stringify(value, null, 2));
}

/** The action's own view of the answers (a graph), when it has one: a fenced block after the table. */
function viewLines(action: Action, hosts: Record<string, unknown>[]): string[] {
  const view = action.view?.(hosts);
  return view ? ['', fenced(view.language, view.text)] : [];
}

/** At or over this, a percentage is worth a look before the rest. */
const HOT_PERCENT = 90;
const TROUBLED_STATES = new Set(['unhealthy', 'restarting', 'dead', 'unavailable', 'partial', 'critical', 'warning', 'down', 'failed', 'warn', 'fail']);

const STATE_KEYS = new Set(['state', 'health', 'status', 'level']);

/** Whether one field is worth a look: a figure over HOT_PERCENT, a restart, a troubled state. */
function hotField(key: string, value: unknown): boolean {
  if (typeof value === 'number') return (key.endsWith('percent') && value >= HOT_PERCENT) || (key === 'restart_count' && value > 0);
  return typeof value === 'string' && STATE_KEYS.has(key) && TROUBLED_STATES.has(value);
}

/** What in a record (and the records it holds, one level down) is worth a look, as `key value` phrases. */
function hotFields(record: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(record).flatMap(([key, value]): string[] => {
    if (hotField(key, value)) return [`${prefix}${key} ${typeof value === 'number' ? numberText(key, value) : value}`];
    if (!prefix && value && typeof value === 'object')
      return (Array.isArray(value) ? value : [value]).flatMap((v) => (v && typeof v === 'object' ? hotFields(v as Record<string, unknown>, `${key}.`) : []));
    return [];
  });
}

/** Whether hotFields would find anything, without building its phrases: asked of every row of a table. */
function hot(record: Record<string, unknown>, nested = false): boolean {
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (hotField(key, value)) return true;
    if (nested || !value || typeof value !== 'object') continue;
    for (const inner of Array.isArray(value) ? value : [value]) {
      if (inner && typeof inner === 'object' && hot(inner as Record<string, unknown>, true)) return true;
    }
  }
  return false;
}

/** How much a row asks for attention: 3 no answer, 2 partly failed, 1 over a threshold or unhealthy, 0 fine. */
function attention(record: Record<string, unknown>): number {
  if (record.availability === 'unavailable') return 3;
  if (record.availability === 'partial' || (Array.isArray(record.errors) && record.errors.length)) return 2;
  return hot(record) ? 1 : 0;
}

/**
 * Rows whose `first` field is truthy first, then those that need attention
 * (worst first), the others in their order; and how many need attention.
 */
function troubleFirst<T extends Record<string, unknown>>(rows: T[], first?: string): { ordered: T[]; needing: number } {
  let needing = 0;
  const weighed = rows.map((row, index) => {
    const weight = attention(row);
    if (weight > 0) needing += 1;
    return { row, index, weight: weight + (first && row[first] ? 4 : 0) };
  });
  weighed.sort((a, b) => b.weight - a.weight || a.index - b.index);
  return { ordered: weighed.map(({ row }) => row), needing };
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

function isFlatRecordList(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.length > 0 && value.every((v) => v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every(isScalar));
}

/** A record's fields, one line each; `tables` shows a list of flat records (a broker answer's hot_hosts) as a table rather than JSON. */
function fieldList(record: Record<string, unknown>, skip: Set<string> = new Set(), tables = false): string[] {
  const lines: string[] = [];
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (skip.has(key)) continue;
    if (tables && isFlatRecordList(value)) {
      blocks.push(`**${key}** (${value.length}):`, ...itemsTable(value, []), '');
      continue;
    }
    const whole = cell(value, key, Number.POSITIVE_INFINITY);
    if (isScalar(value) || whole.length <= 82) lines.push(`- **${key}**: ${isScalar(value) ? cell(value, key, 2000) : whole}`);
    else blocks.push(`**${key}**:\n${jsonBlock(value)}`);
  }
  return [...lines, ...(blocks.length ? ['', ...blocks] : [])];
}

/** A column's value: a field, or a field of a field (`state.status`, `cpu.usage_percent`). */
function valueAt(item: Record<string, unknown>, column: string): unknown {
  return column.split('.').reduce<unknown>((value, key) => (value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), item);
}

/** Up to six fields every item holds as a plain value: the columns of a table nothing hinted. */
function scalarColumns(items: Record<string, unknown>[], exclude: readonly string[]): string[] {
  const present = new Set(items.flatMap((item) => Object.keys(item)));
  return [...present].filter((key) => !exclude.includes(key) && items.every((item) => isScalar(item[key]))).slice(0, 6);
}

/**
 * A table of items (rows), choosing the hinted columns, and saying which fields
 * and rows it left out. Rows that need attention come first, except in a log
 * (`tail`), whose rows keep their order and whose newest rows are shown;
 * `shown` are the rows it has room for, when something chose them already.
 */
function itemsTable(
  items: Record<string, unknown>[],
  columns: readonly string[],
  lead: string[] = [],
  tail?: TableHint['tail'],
  shown?: Record<string, unknown>[],
  first?: string,
): string[] {
  const present = new Set(items.flatMap((item) => Object.keys(item)));
  const hinted = columns.filter((c) => !lead.includes(c) && items.some((item) => valueAt(item, c) !== undefined));
  const chosen = hinted.length ? hinted : scalarColumns(items, lead);
  const omitted = [...present].filter((key) => !lead.includes(key) && !chosen.some((c) => c === key || c.startsWith(`${key}.`)));
  const { ordered, needing } = tail ? { ordered: items, needing: 0 } : troubleFirst(items, first);
  // Say why a row comes first, unless the shown columns already do (every row is a finding).
  const why = needing > 0 && needing < items.length;
  const picked = shown ?? (tail ? ordered.slice(-MAX_ROWS) : ordered.slice(0, MAX_ROWS));
  const rows = picked.map((item) => [
    ...[...lead, ...chosen].map((key) => cell(valueAt(item, key), key)),
    ...(why ? [cell(hotFields(item).slice(0, 2).join('; '), '', 120)] : []),
  ]);
  const out = [table([...lead, ...chosen, ...(why ? ['attention'] : [])], rows)];
  if (why) out.unshift(`${needing} of ${items.length} rows need attention and come first.`, '');
  const left = items.length - picked.length;
  if (left > 0 && tail) {
    out.unshift(
      `(${left} older rows not shown, the newest ${picked.length} are; structuredContent has all ${items.length}; to read older ones here, ${tail.readOlder})`,
    );
  } else if (left > 0) {
    out.push(
      `(${left} more rows not shown${needing < MAX_ROWS ? ', none of them needing attention' : ''}; structuredContent has all ${items.length}, or narrow the call with host, hosts, selector or a filter.)`,
    );
  }
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
  const page = envelope.page as { number: number; of: number; first_host: string; last_host: string } | undefined;
  if (page) {
    lines.push(
      `Page ${page.number} of ${page.of}: hosts ${cell(page.first_host)} to ${cell(page.last_host)} (the hosts fill more than one answer). ${
        envelope.next_cursor
          ? `Call again with the same arguments and cursor=${JSON.stringify(envelope.next_cursor)} for page ${page.number + 1}.`
          : 'This is the last page.'
      }`,
      '',
    );
  }
  const errors = (envelope.errors as ErrorInfo[]) ?? [];
  if (errors.length) lines.push(`**Failures** (${errors.length}):`, ...errorLines(errors), '');
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
    const failing = nodes.some((node) => (node.failed_collectors as string[] | undefined)?.length);
    const rows = nodes.map((node) => ({
      ...Object.fromEntries(
        Object.entries(node).filter(([key]) => !NODE_FIELDS.has(key) || key === 'host' || key === 'availability' || (failing && key === 'failed_collectors')),
      ),
    }));
    const base = ['availability', ...(failing ? ['failed_collectors'] : [])];
    const hinted = action.table?.columns ?? [];
    lines.push(
      ...itemsTable(rows, [...base, ...(hinted.length ? hinted : scalarColumns(rows, ['host', ...base]))], ['host'], undefined, undefined, action.table?.first),
    );
  }
  lines.push(...viewLines(action, nodes));
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
  lines.push(...viewLines(action, [node]));
  return lines.join('\n');
}

function renderBroker(action: Action, result: Record<string, unknown>): string {
  const list = action.table?.list;
  const items = list ? (result[list] as Record<string, unknown>[] | undefined) : undefined;
  const lines = [`**${action.title}**`, ''];
  if (list && items) {
    lines.push(...(items.length ? itemsTable(items, action.table?.columns ?? [], [], action.table?.tail) : [`No ${list}.`]));
    const rest = fieldList(result, new Set([list]), true);
    if (rest.length) lines.push('', ...rest);
  } else {
    lines.push(...fieldList(result, new Set(), true));
  }
  return lines.join('\n');
}

function renderError(error: ErrorInfo & Record<string, unknown>, targets?: { host: string; resource?: string }[]): string {
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
