import type { ServerResponse } from 'node:http';
import { SECURITY_HEADERS, sendJson } from './web-json.ts';

/**
 * The answer of one console call, with its progress before it when the page
 * asked for it: newline-delimited JSON, one `{"progress": {progress, total,
 * message}}` line per step and one `{"answer": …}` line last. The status line
 * goes out with the first step, so a call refused before it runs is answered
 * as a plain JSON body, whether the page asked for progress or not.
 */
export class ProgressLines {
  constructor(
    private readonly res: ServerResponse,
    readonly wanted: boolean,
  ) {}

  /** One step: `progress` of `total` (hosts settled of hosts targeted), and what just happened. */
  readonly progress = (progress: number, total: number | undefined, message: string): void => {
    if (!this.wanted || this.res.writableEnded || this.res.destroyed) return;
    this.open();
    this.res.write(`${JSON.stringify({ progress: { progress, ...(total === undefined ? {} : { total }), message } })}\n`);
  };

  /** The answer: the last line of a stream, or the whole JSON body when no step was sent. */
  answer(body: Record<string, unknown>): void {
    if (this.res.headersSent) this.res.end(`${JSON.stringify({ answer: body })}\n`);
    else sendJson(this.res, 200, body);
  }

  private open(): void {
    if (this.res.headersSent) return;
    // No buffering between the broker and the page: each step shows as it happens.
    this.res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'application/x-ndjson', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  }
}
