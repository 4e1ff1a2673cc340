import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { parseDurationMs } from '../../../shared/options/values.ts';

export type LogStream = 'stdout' | 'stderr';

interface LogLine {
  stream: LogStream;
  timestamp?: string;
  text: string;
}

/** A line longer than this is cut (the engine splits at 16 KiB too). */
export const MAX_LINE_CHARS = 16 * 1024;
/**
 * All lines of one answer together stay under this, counting each line's JSON
 * around its text: an answer a model can take whole (well under 25,000 tokens).
 */
export const MAX_TOTAL_CHARS = 48_000;
const LINE_JSON_CHARS = 30;

/**
 * Splits the engine's multiplexed log stream (non-TTY containers) into stdout
 * and stderr. Each frame: 1 byte stream (1 stdout, 2 stderr), 3 zero bytes, a
 * 4-byte big-endian length, then the payload. A partial frame at the end of a
 * chunk is kept for the next one.
 */
export class LogDemultiplexer {
  private pending: Buffer = Buffer.alloc(0);
  private readonly partial: Record<LogStream, string> = { stdout: '', stderr: '' };

  constructor(private readonly multiplexed: boolean) {}

  /** Feeds bytes; returns the complete lines they finish. */
  push(chunk: Buffer): { stream: LogStream; raw: string }[] {
    const lines: { stream: LogStream; raw: string }[] = [];
    const emit = (stream: LogStream, text: string) => {
      const combined = this.partial[stream] + text;
      const pieces = combined.split('\n');
      this.partial[stream] = pieces.pop() ?? '';
      for (const raw of pieces) lines.push({ stream, raw: raw.replace(/\r$/, '') });
    };
    if (!this.multiplexed) {
      emit('stdout', chunk.toString('utf8'));
      return lines;
    }
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      const stream: LogStream = this.pending[0] === 2 ? 'stderr' : 'stdout';
      emit(stream, this.pending.subarray(8, 8 + size).toString('utf8'));
      this.pending = this.pending.subarray(8 + size);
    }
    return lines;
  }

  /** Whatever is left without a final newline. */
  flush(): { stream: LogStream; raw: string }[] {
    const rest = (['stdout', 'stderr'] as const).filter((s) => this.partial[s] !== '').map((stream) => ({ stream, raw: this.partial[stream] }));
    this.partial.stdout = '';
    this.partial.stderr = '';
    return rest;
  }
}

/** `2026-11-30T06:00:00.123456789Z text` → timestamp and text (the engine adds the stamp when asked). */
export function splitTimestamp(raw: string): { timestamp: string | undefined; text: string } {
  const space = raw.indexOf(' ');
  if (space > 0 && /^\d{4}-\d\d-\d\dT/.test(raw)) return { timestamp: raw.slice(0, space), text: raw.slice(space + 1) };
  return { timestamp: undefined, text: raw };
}

/** since / until as the engine takes them (unix seconds), from RFC 3339, unix seconds or a duration ago. */
export function toUnixSeconds(value: string | number, what: string, now = Date.now()): number {
  if (typeof value === 'number') return value;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const parsed = Date.parse(text);
  if (!Number.isNaN(parsed)) return parsed / 1000;
  try {
    return (now - parseDurationMs(text, what)) / 1000;
  } catch {
    throw new FleetError('invalid_argument', `${what} "${value}" is neither a time nor a duration`, {
      hint: 'Use RFC 3339 (2026-11-30T10:00:00Z), unix seconds, or a duration ago such as 10m or 2h.',
    });
  }
}

/** Collects lines under the answer's bounds, remembering whether and why it cut any. */
export class LineCollector {
  readonly lines: LogLine[] = [];
  private chars = 0;
  truncatedReason: string | undefined;

  constructor(private readonly options: { timestamps: boolean; contains: string | undefined; stream: LogStream | 'both'; maxLines: number }) {}

  add(stream: LogStream, raw: string): LogLine | undefined {
    if (this.options.stream !== 'both' && stream !== this.options.stream) return undefined;
    const { timestamp, text: full } = splitTimestamp(raw);
    if (this.options.contains && !full.toLowerCase().includes(this.options.contains.toLowerCase())) return undefined;
    let text = full;
    if (text.length > MAX_LINE_CHARS) {
      text = `${text.slice(0, MAX_LINE_CHARS)}…`;
      this.truncatedReason ??= `lines longer than ${MAX_LINE_CHARS} characters were cut`;
    }
    const line: LogLine = { stream, text, ...(this.options.timestamps && timestamp ? { timestamp } : {}) };
    this.lines.push(line);
    this.chars += text.length + LINE_JSON_CHARS;
    while (this.lines.length > this.options.maxLines || this.chars > MAX_TOTAL_CHARS) {
      // Name the limit that made this cut, before the cut changes the counts.
      this.truncatedReason =
        this.chars > MAX_TOTAL_CHARS
          ? `the answer is capped at ${MAX_TOTAL_CHARS} characters, so older lines were dropped: to read them, narrow with until, since, contains or stream`
          : `only the last ${this.options.maxLines} lines are kept: ask for more with lines (max 5000), or narrow with since, until or contains`;
      const dropped = this.lines.shift();
      this.chars -= (dropped?.text.length ?? 0) + LINE_JSON_CHARS;
    }
    return line;
  }
}
