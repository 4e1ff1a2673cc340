/** Which of a container's output streams a log line came from. */
export type LogStream = 'stdout' | 'stderr';

/** A line longer than this is cut (the engine splits at 16 KiB too). */
export const MAX_LINE_CHARS = 16 * 1024;

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
