import { type LogStream, MAX_LINE_CHARS, splitTimestamp } from '../../engine/log-demultiplexer.ts';

interface LogLine {
  stream: LogStream;
  timestamp?: string;
  text: string;
}

/**
 * All lines of one answer together stay under this, counting each line's JSON
 * around its text: an answer a model can take whole (well under 25,000 tokens).
 */
export const MAX_TOTAL_CHARS = 48_000;
const LINE_JSON_CHARS = 30;

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
