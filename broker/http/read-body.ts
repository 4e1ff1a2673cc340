import type { IncomingMessage } from 'node:http';
import { FleetError } from '../../shared/errors/fleet-error.ts';

export interface BodyLimits {
  /** The largest body taken. */
  maxBytes: number;
  /** How long the whole body may take to arrive. */
  timeoutMs: number;
}

/**
 * The headers of an answer after which the connection cannot serve another
 * request: Node ends the socket once the answer is written. Every answer to a
 * body readBody() refused carries them, since the rest of that body was never
 * read and would be taken for the next request (a client reusing the
 * connection waited for ever).
 */
export const CLOSES_CONNECTION = { connection: 'close' } as const;

function sizeOf(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

/**
 * Reads a request's body whole, within `limits`. Refuses with a FleetError
 * whose `details.httpStatus` is the status to answer: 413 for a body larger
 * than `maxBytes` (told by its Content-Length before anything is read, or
 * found while reading), 408 for one still arriving after `timeoutMs`. Either
 * way the answer must carry CLOSES_CONNECTION.
 */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const tooLarge = () =>
    new FleetError('invalid_argument', `the request body is larger than ${sizeOf(limits.maxBytes)}, the most this endpoint takes`, {
      hint: 'Send a smaller request: fewer messages in a batch, or smaller arguments.',
      details: { httpStatus: 413 },
    });
  if (Number(req.headers['content-length']) > limits.maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (error: FleetError | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(clock);
      req.off('data', onData);
      if (!error) {
        resolve(Buffer.concat(chunks, size));
        return;
      }
      // Nothing more is read: the connection closes after the answer.
      req.pause();
      reject(error);
    };
    const clock = setTimeout(
      () =>
        settle(
          new FleetError('deadline_exceeded', `the request body did not arrive within ${limits.timeoutMs / 1000} s`, {
            hint: 'Send the body at once, after the headers; the connection is closed.',
            details: { httpStatus: 408 },
          }),
        ),
      limits.timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBytes) settle(tooLarge());
      else chunks.push(chunk);
    };
    // Every request closes, most long after their body came: the error (and its stack) is made only for one cut off.
    const left = () => {
      if (!settled) settle(new FleetError('cancelled', 'the client closed the connection before its request body arrived'));
    };
    req.on('data', onData);
    req.once('end', () => settle(undefined));
    // Kept for good: a request cut off is destroyed with an error, which must not find no listener.
    req.on('error', left);
    req.once('close', left);
  });
}
