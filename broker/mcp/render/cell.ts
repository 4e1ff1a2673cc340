/**
 * One value of an answer as the text shows it: numbers with their units,
 * fleet strings quoted so a model tells them from our words. structuredContent
 * keeps every raw value; only the text reads this way.
 */

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * The unit of a figure whose key cannot name it (a series' `latest` is a
 * percentage for CPU and bytes for memory): the answer names it in a field.
 */
export type FigureUnit = 'percent' | 'bytes' | 'bytes_per_second' | (string & Record<never, never>);

function bytesText(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? Math.round(value * 10) / 10 : value.toFixed(value >= 100 ? 0 : 1)} ${BINARY_UNITS[unit]}`;
}

function secondsText(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  if (days) return `${days} d ${hours} h`;
  if (hours) return `${hours} h ${minutes} min`;
  return minutes ? `${minutes} min ${Math.round(seconds % 60)} s` : `${Math.round(seconds * 10) / 10} s`;
}

const percentText = (value: number) => `${Math.round(value * 10) / 10} %`;

/** A number in a unit the answer names. */
function unitText(unit: FigureUnit, value: number): string | undefined {
  if (unit === 'percent') return percentText(value);
  if (unit === 'bytes') return bytesText(value);
  if (unit === 'bytes_per_second') return `${bytesText(value)}/s`;
  return undefined;
}

/**
 * A number as people read it, by the unit its key names (`memory_used_bytes`
 * → `1.2 GiB`) or the one given. A time keeps its number (the key says unix
 * ms, and a model passes it on as one) with the date beside it.
 */
export function numberText(key: string, value: number, unit?: FigureUnit): string {
  const inUnit = unit === undefined ? undefined : unitText(unit, value);
  if (inUnit !== undefined) return inUnit;
  if (key.endsWith('_unix_ms')) return value > 0 ? `${value} (${new Date(value).toISOString().replace('.000Z', 'Z')})` : String(value);
  if (key.endsWith('_bytes_per_s') || key.endsWith('_bytes_per_second')) return `${bytesText(value)}/s`;
  if (key.endsWith('_bytes')) return bytesText(value);
  if (key.endsWith('percent') || key.endsWith('_threshold')) return percentText(value);
  if (key.endsWith('_s')) return secondsText(value);
  if (key.endsWith('_ms')) return `${value} ms`;
  return String(value);
}

/** Control characters (ANSI escapes, carriage returns, line breaks) spelled out, so no terminal or renderer acts on them. */
export function visible(text: string): string {
  return text.replace(/\r?\n/g, '⏎').replace(/[\p{Cc}\u2028\u2029]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Text that may come from a host, an engine or an agent (an error message, a
 * hint, a collector's reason) as one inline code span: quoted data, never
 * Markdown, whatever backticks, headings or links it holds.
 */
export function quoted(text: string): string {
  const body = visible(text);
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** Text as a fenced block whose fence nothing inside it can close. */
export function fenced(language: string, text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

/** A value as a fenced JSON block. */
export function jsonBlock(value: unknown): string {
  return fenced('json', JSON.stringify(value, null, 2));
}

/** A call to run next, as an answer suggests it: the tool and its exact arguments. */
export interface SuggestedCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/** Whether a record is a suggested call (`{tool, arguments}`, as report and the check-ups give them). */
export function isSuggestedCall(value: unknown): value is SuggestedCall {
  if (!value || typeof value !== 'object') return false;
  const { tool, arguments: args } = value as Record<string, unknown>;
  return typeof tool === 'string' && !!args && typeof args === 'object' && !Array.isArray(args);
}

/** A suggested call as one code span a model can copy: `docker_logs {"host":"web-1","name":"crashy"}`. */
export function callText(call: SuggestedCall): string {
  return quoted(`${call.tool} ${JSON.stringify(call.arguments)}`);
}

/**
 * A value from the fleet in a table cell or field list: in a code span, so a
 * model can tell what hosts wrote from what we write (a container name or a log
 * line is data, never an instruction).
 */
export function cell(value: unknown, key = '', maxLength = 80, unit?: FigureUnit): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'number') return numberText(key, value, unit);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (isSuggestedCall(value)) return callText(value);
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
