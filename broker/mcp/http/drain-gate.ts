import type { ServerResponse } from 'node:http';
import type { Logger } from '../../../shared/log/logger.ts';
import type { EdgeStep } from './edge-chain.ts';
import type { Exchange, McpExchange } from './exchange.ts';
import { sendJson, sendJsonRpcError } from './json-answers.ts';
import { asksForSomething, isListen } from './mcp-request-kind.ts';

/** What a request that reaches a stopping broker is told: it was not handled, so it may be sent again as it is. */
const STOPPING_MESSAGE =
  'Unavailable: this broker is shutting down and did not handle the request; send it again (to another broker of the cluster, or to this one once it is back)';

/**
 * The edge of a broker that stops the orderly way: once `close()` is called,
 * a request that asks for something new is answered 503, unhandled, with its
 * connection closed; what completes work the broker owes (a client's answer
 * to an elicitation, a cancellation) still goes through. Meanwhile it counts
 * the answers owed, POSTs to /mcp whose answer is still being written (an
 * SSE answer lasts until its call ends), so the broker can wait for them.
 */
export class DrainGate {
  private closed = false;
  private readonly answering = new Set<ServerResponse>();

  constructor(private readonly log: Logger) {}

  get closing(): boolean {
    return this.closed;
  }

  /** Every path but /mcp, before it is served: refused once closing. */
  readonly routes: EdgeStep<Exchange> = async (exchange, next) => {
    if (!this.closed || exchange.url.pathname === '/mcp') return next(exchange);
    sendJson(exchange.res, 503, { error: STOPPING_MESSAGE }, { connection: 'close' });
  };

  /** An /mcp request once its body is read: refused once closing unless it asks for nothing new; its answer counted as owed. */
  readonly mcp: EdgeStep<McpExchange> = async (exchange, next) => {
    const { req, res, body, parsed } = exchange;
    if (this.closed && (body === undefined || asksForSomething(parsed))) {
      sendJsonRpcError(res, 503, -32000, STOPPING_MESSAGE, { connection: 'close' });
      return;
    }
    // A 2026-07-28 listen stream is open for as long as its client listens: it is not an answer owed.
    if (req.method === 'POST' && !isListen(parsed)) {
      this.answering.add(res);
      res.once('close', () => this.answering.delete(res));
    }
    await next(exchange);
  };

  /** From now on, requests that ask for something new are refused. */
  close(): void {
    this.closed = true;
  }

  /** Resolves once every answer owed has been written (or its client left), or after `graceMs`, with how many are still owed. */
  async answersSent(graceMs: number): Promise<number> {
    const until = Date.now() + graceMs;
    while (this.answering.size > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    if (this.answering.size > 0) this.log.warn('MCP answers still owed when the broker stopped', { requests: this.answering.size });
    return this.answering.size;
  }
}
