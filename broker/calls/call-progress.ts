import type { RunContext } from './call-route.ts';

/** The longest chunk summary a progress message carries. */
const SUMMARY_CHARS = 160;

/**
 * The progress of one call as the client sees it: hosts settled of hosts
 * targeted, and between two settlements one message per streamed chunk. The
 * value only grows (MCP requires it): a chunk moves it a fraction towards the
 * next settlement.
 */
export class CallProgress {
  private done = 0;
  private total = 1;
  private streamed = 0;

  constructor(private readonly context: RunContext) {}

  /** The call went out to `sentTo` hosts of `total`; `done` were settled without asking (hidden, refused locally). */
  start(done: number, total: number, message: string): void {
    this.done = done;
    this.total = Math.max(total, 1);
    this.report(message);
  }

  /** One more host settled. */
  settled(message: string): void {
    this.done += 1;
    this.streamed = 0;
    this.report(message);
  }

  /** A host streamed a chunk of its answer. */
  chunk(host: string, payload: unknown): void {
    this.streamed += 1;
    this.report(`${host}: ${summarize(payload)}`, 1 - 1 / (this.streamed + 1));
  }

  private report(message: string, fraction = 0): void {
    this.context.onProgress?.(Math.min(this.done + fraction, this.total), this.total, message);
  }
}

/** A short line for a chunk: its scalar fields, and the size of its lists. Fleet text stays data: it is cut, never interpreted. */
export function summarize(payload: unknown): string {
  if (payload === null || typeof payload !== 'object') return clip(String(payload));
  const parts = Object.entries(payload as Record<string, unknown>).map(([key, value]) => {
    if (Array.isArray(value)) return `${key}: ${value.length}`;
    if (value !== null && typeof value === 'object') return `${key}: ${summarize(value)}`;
    return `${key}=${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value)}`;
  });
  return clip(parts.join(', '));
}

function clip(text: string): string {
  return text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text;
}
