import type { Action, TableHint } from '../../../shared/catalog/action.ts';
import { type ErrorInfo, errorsBy } from '../../../shared/errors/fleet-error.ts';
import { callText, cell, type FigureUnit, fenced, isSuggestedCall, jsonBlock, numberText, quoted } from './cell.ts';

/** Rows a table shows before it says how many it left out. */
const MAX_ROWS = 50;
/** Cells of the tables that spell out findings and changes: their messages are the point, so they are cut late. */
const DETAIL_CELL_CHARS = 400;
const NODE_FIELDS = new Set(['host', 'availability', 'sampled_at_unix_ms', 'failed_collectors', 'errors', 'absent_collectors']);

/** Which columns are figures in a unit the answer names (a series' latest, min, max in its `unit`). */
type Units = ReadonlyMap<string, FigureUnit>;

function unitsOf(hint: TableHint | undefined, answer: Record<string, unknown>): Units {
  const unit = hint?.unit ? answer[hint.unit.field] : undefined;
  return typeof unit === 'string' && hint?.unit ? new Map(hint.unit.columns.map((column) => [column, unit])) : new Map();
}

/** The action's own view of the answers (a graph), when it has one: a fenced block after the table. */
function viewLines(action: Action, hosts: Record<string, unknown>[]): string[] {
  const view = action.view?.(hosts);
  return view ? ['', fenced(view.language, view.text)] : [];
}

/** At or over this, a percentage is worth a look before the rest (unless the row names its own threshold). */
const HOT_PERCENT = 90;
const TROUBLED_STATES = new Set(['unhealthy', 'restarting', 'dead', 'unavailable', 'partial', 'critical', 'warning', 'down', 'failed', 'warn', 'fail']);

const STATE_KEYS = new Set(['state', 'health', 'status', 'level']);

/**
 * Whether one field is worth a look: a figure over its row's threshold (or
 * HOT_PERCENT), a restart, a troubled state. A threshold is never worth a
 * look itself: it is what a figure is weighed against.
 */
function hotField(key: string, value: unknown, record: Record<string, unknown>): boolean {
  if (typeof value === 'number') {
    if (key.includes('threshold')) return false;
    if (key.endsWith('percent')) return value >= (typeof record.threshold_percent === 'number' ? record.threshold_percent : HOT_PERCENT);
    return key === 'restart_count' && value > 0;
  }
  return typeof value === 'string' && STATE_KEYS.has(key) && TROUBLED_STATES.has(value);
}

/** What in a record (and the records it holds, one level down) is worth a look, as `key value` phrases. */
function hotFields(record: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(record).flatMap(([key, value]): string[] => {
    if (hotField(key, value, record)) return [`${prefix}${key} ${typeof value === 'number' ? numberText(key, value) : value}`];
    if (!prefix && value && typeof value === 'object')
      return (Array.isArray(value) ? value : [value]).flatMap((v) => (v && typeof v === 'object' ? hotFields(v as Record<string, unknown>, `${key}.`) : []));
    return [];
  });
}

/** Whether hotFields would find anything, without building its phrases: asked of every row of a table. */
function hot(record: Record<string, unknown>, nested = false): boolean {
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (hotField(key, value, record)) return true;
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

/** Past this many failures, the text says them by kind (code, collector and next step), with hosts named up to NAMED_HOSTS a kind. */
const LISTED_ERRORS = 20;
const NAMED_HOSTS = 8;

function errorLines(errors: ErrorInfo[]): string[] {
  if (errors.length > LISTED_ERRORS) return errorKindLines(errors);
  return errors.map(
    (e) =>
      `- ${e.host ? `${cell(e.host)}: ` : ''}${e.collector ? `${cell(e.collector)} ` : ''}**${e.code}**: ${quoted(e.message)}${e.hint ? ` (next: ${quoted(e.hint)})` : ''}`,
  );
}

/**
 * Many failures (a fleet call while hundreds of agents are offline) by kind,
 * most frequent first: a line per kind naming some of its hosts, its first
 * message and its next step, where a line per failure would run past what a
 * client keeps of one answer's text.
 */
function errorKindLines(errors: ErrorInfo[]): string[] {
  return [...errorsBy(errors, (e) => JSON.stringify([e.code, e.collector ?? '', e.hint])).values()]
    .sort((a, b) => b.length - a.length)
    .map((kind) => {
      const [e] = kind as [ErrorInfo, ...ErrorInfo[]];
      const hosts = kind.flatMap((k) => (k.host ? [k.host] : []));
      const named = hosts.slice(0, NAMED_HOSTS).map((host) => cell(host));
      const on = hosts.length
        ? ` on ${hosts.length} host${hosts.length === 1 ? '' : 's'} (${named.join(', ')}${hosts.length > named.length ? ` and ${hosts.length - named.length} more` : ''})`
        : ` ×${kind.length}`;
      return `- ${e.collector ? `${cell(e.collector)} ` : ''}**${e.code}**${on}: ${quoted(e.message)}${kind.length > 1 ? ' (the first)' : ''}${e.hint ? ` (next: ${quoted(e.hint)})` : ''}`;
    });
}

function isScalar(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/** A list of records whose fields a table cell can show: plain values, or records of plain values (a call's arguments). */
function isRecordList(value: unknown): value is Record<string, unknown>[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((v) => isRecord(v) && Object.values(v).every((f) => isScalar(f) || (isRecord(f) && Object.values(f).every(isScalar))))
  );
}

/** Suggested calls, one line each: the exact call, and why (the reason may name fleet things, so it is quoted). */
function callLines(items: Record<string, unknown>[], host?: (item: Record<string, unknown>) => unknown): string[] {
  return items.map((item) => {
    const on = host ? `${cell(host(item))}: ` : '';
    const why = typeof item.reason === 'string' ? `: ${quoted(item.reason)}` : '';
    return `- ${on}${isSuggestedCall(item) ? callText(item) : cell(item)}${why}`;
  });
}

/** A list of records as its own block: suggested calls as call lines, anything else as a table of every field. */
function listBlock(key: string, items: Record<string, unknown>[], units: Units, lead: string[] = []): string[] {
  if (items.every(isSuggestedCall))
    return [`**${key}** (${items.length}), each the exact call to make:`, ...callLines(items, lead.length ? (item) => item.host : undefined), ''];
  return [`**${key}** (${items.length}):`, ...itemsTable(items, { columns: [], lead, every: true, units, cellChars: DETAIL_CELL_CHARS }), ''];
}

/** A record's fields, one line each; lists of records become tables (or call lines) of their own. */
function fieldList(record: Record<string, unknown>, skip: Set<string>, units: Units): string[] {
  const lines: string[] = [];
  const blocks: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (skip.has(key)) continue;
    if (isRecordList(value)) {
      blocks.push(...listBlock(key, value, units));
      continue;
    }
    const whole = cell(value, key, Number.POSITIVE_INFINITY, units.get(key));
    if (isScalar(value) || whole.length <= 82) lines.push(`- **${key}**: ${isScalar(value) ? cell(value, key, 2000, units.get(key)) : whole}`);
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

interface TableOptions {
  /** The columns the action hints; with none, up to six plain fields. */
  columns: readonly string[];
  /** Columns before all others (the host of a fleet table). */
  lead?: string[];
  /** The rows are a log: keep their order, show the newest. */
  tail?: TableHint['tail'];
  /** The rows it has room for, when something chose them already. */
  shown?: Record<string, unknown>[];
  /** A field whose truthy rows come first. */
  first?: string;
  /** Show every field the rows hold (one host's answer, a finding's every detail), hinted columns first. */
  every?: boolean;
  units?: Units;
  /** How to read the fields a table leaves out. */
  more?: string;
  cellChars?: number;
}

/**
 * A table of items (rows), choosing the hinted columns (or every field), and
 * saying which fields and rows it left out and how to read them. Rows that
 * need attention come first, except in a log (`tail`), whose rows keep their
 * order and whose newest rows are shown.
 */
function itemsTable(items: Record<string, unknown>[], options: TableOptions): string[] {
  const { lead = [], tail, shown, first, units = new Map(), cellChars = 80 } = options;
  const present = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const hinted = options.columns.filter((c) => !lead.includes(c) && items.some((item) => valueAt(item, c) !== undefined));
  const covered = (key: string, columns: readonly string[]) => columns.some((c) => c === key || c.startsWith(`${key}.`));
  const base = hinted.length ? hinted : options.every ? [] : scalarColumns(items, lead);
  const chosen = options.every ? [...base, ...present.filter((key) => !lead.includes(key) && !covered(key, base))] : base;
  const omitted = present.filter((key) => !lead.includes(key) && !covered(key, chosen));
  const { ordered, needing } = tail ? { ordered: items, needing: 0 } : troubleFirst(items, first);
  // Say why a row comes first, unless the shown columns already do (every row is a finding).
  const why = needing > 0 && needing < items.length;
  const picked = shown ?? (tail ? ordered.slice(-MAX_ROWS) : ordered.slice(0, MAX_ROWS));
  const rows = picked.map((item) => [
    ...[...lead, ...chosen].map((key) => cell(valueAt(item, key), key, cellChars, units.get(key))),
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
  if (omitted.length) out.push(`Fields not in the table: ${omitted.join(', ')}. ${options.more ?? 'structuredContent has every field.'}`);
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

/** The legend of an action's table, when its figures need one. */
function legendLines(action: Action): string[] {
  return action.table?.legend ? ['', action.table.legend] : [];
}

/** Collectors absent on some hosts, said once: nothing to collect there, which is no failure. */
function absentLines(absent: { collector: string; hosts: string[] }[] | undefined): string[] {
  if (!absent?.length) return [];
  const each = absent.map((entry) => `${cell(entry.collector)} on ${entry.hosts.map((host) => cell(host)).join(', ')}`);
  return ['', `Absent, not failed (nothing to collect there, so those hosts answer nothing for it): ${each.join('; ')}.`];
}

/** How a fleet table's reader gets the fields it left out: one host's answer shows them all. */
const ONE_HOST = "Call again with host=NAME for every field of that host's answer.";

/** A fleet answer: one table across hosts, the lists each host's answer spells out, the failures. */
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
  const counts = envelope.error_counts as Record<string, number> | undefined;
  const whole = Object.entries(counts ?? {})
    .sort(([, a], [, b]) => b - a)
    .map(([code, n]) => `${n} ${code}`);
  const heading = counts
    ? `**Failures**: ${whole.join(', ')} in the whole call; ${errors.length ? `those of this page's hosts (${errors.length}):` : "none of this page's hosts."}`
    : errors.length
      ? `**Failures** (${errors.length}):`
      : undefined;
  if (heading) lines.push(heading, ...errorLines(errors), '');
  const hint = action.table;
  const list = hint?.list;
  if (list) {
    const perHost = nodes.map((node) => ((node[list] as Record<string, unknown>[] | undefined) ?? []).map((item) => ({ host: node.host, ...item })));
    const items = perHost.flat();
    const tail = hint?.tail;
    // A log's table keeps the newest rows of every host, not the end of the last host's.
    const shown = tail ? newestOfEach(perHost, MAX_ROWS) : undefined;
    const units = unitsOf(hint, nodes[0] ?? {});
    if (items.length)
      lines.push(
        ...itemsTable(items, { columns: hint?.columns ?? [], lead: ['host'], ...(tail ? { tail } : {}), ...(shown ? { shown } : {}), units, more: ONE_HOST }),
      );
    else lines.push(`No ${list} on the hosts that answered.`);
  } else if (nodes.length) {
    const failing = nodes.some((node) => (node.failed_collectors as string[] | undefined)?.length);
    const details = new Set(hint?.details ?? []);
    const rows = nodes.map((node) => ({
      ...Object.fromEntries(
        Object.entries(node).filter(
          ([key]) => !details.has(key) && (!NODE_FIELDS.has(key) || key === 'host' || key === 'availability' || (failing && key === 'failed_collectors')),
        ),
      ),
    }));
    const base = ['availability', ...(failing ? ['failed_collectors'] : [])];
    const hinted = (hint?.columns ?? []).filter((column) => !details.has(column));
    lines.push(
      ...itemsTable(rows, {
        columns: [...base, ...(hinted.length ? hinted : scalarColumns(rows, ['host', ...base]))],
        lead: ['host'],
        ...(hint?.first ? { first: hint.first } : {}),
        more: ONE_HOST,
      }),
    );
  }
  // What each host's answer lists besides its table (findings, changes, calls to make), spelled out with its host.
  for (const field of hint?.details ?? []) {
    const items = nodes.flatMap((node) => ((node[field] as Record<string, unknown>[] | undefined) ?? []).map((item) => ({ host: node.host, ...item })));
    if (items.length) lines.push('', ...listBlock(field, items, new Map(), ['host']));
  }
  lines.push(...absentLines(envelope.absent_collectors as { collector: string; hosts: string[] }[] | undefined));
  lines.push(...legendLines(action), ...viewLines(action, nodes));
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd();
}

function renderNode(action: Action, node: Record<string, unknown>): string {
  const lines = [`**${action.title}** on ${cell(node.host)}: ${node.availability}.`, ''];
  const list = action.table?.list;
  const items = list ? (node[list] as Record<string, unknown>[] | undefined) : undefined;
  const units = unitsOf(action.table, node);
  if (list && items) {
    // One host's answer is the place to read every field: its table leaves none out.
    const tail = action.table?.tail;
    lines.push(
      ...(items.length ? itemsTable(items, { columns: action.table?.columns ?? [], every: true, ...(tail ? { tail } : {}), units }) : [`No ${list}.`]),
    );
    lines.push('', ...fieldList(node, new Set([...NODE_FIELDS, list]), units));
  } else {
    lines.push(...fieldList(node, NODE_FIELDS, units));
  }
  const failed = node.failed_collectors as string[];
  if (failed?.length) lines.push('', `Collectors that failed: ${failed.map((name) => cell(name)).join(', ')} (figures they feed are null).`);
  const absent = node.absent_collectors as string[] | undefined;
  if (absent?.length) lines.push(...absentLines(absent.map((collector) => ({ collector, hosts: [node.host as string] }))));
  const errors = node.errors as ErrorInfo[];
  if (errors?.length) lines.push('', '**Errors:**', ...errorLines(errors));
  lines.push(...legendLines(action), ...viewLines(action, [node]));
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd();
}

function renderBroker(action: Action, result: Record<string, unknown>): string {
  const list = action.table?.list;
  const items = list ? (result[list] as Record<string, unknown>[] | undefined) : undefined;
  const units = unitsOf(action.table, result);
  const lines = [`**${action.title}**`, ''];
  if (list && items) {
    const tail = action.table?.tail;
    const more = action.table?.more;
    lines.push(
      ...(items.length
        ? itemsTable(items, { columns: action.table?.columns ?? [], ...(tail ? { tail } : {}), units, ...(more ? { more } : {}) })
        : [`No ${list}.`]),
    );
    const next = result.next_offset;
    const rest = fieldList(result, new Set([list, 'next_offset']), units);
    if (rest.length) lines.push('', ...rest);
    if (typeof next === 'number')
      lines.push(
        '',
        `These are ${list} ${next - items.length + 1} to ${next}. Next page: call ${action.tool} again with the same arguments and offset=${next}.`,
      );
  } else {
    lines.push(...fieldList(result, new Set(), units));
  }
  lines.push(...legendLines(action));
  return lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd();
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
