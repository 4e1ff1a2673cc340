import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { captureLogger } from '../../../test/harness/capture-logger.ts';
import { type EdgeServer, sendTo, serveEdge } from '../../../test/harness/edge-server.ts';
import { FULL_ACCESS, GrantSet } from '../../auth/grants.ts';
import { DrainGate } from './drain-gate.ts';
import { EdgeChain } from './edge-chain.ts';
import type { Exchange, ProvenExchange } from './exchange.ts';
import { requestBody } from './request-body.ts';

const identity = { id: 'i1', name: 'reader', level: 0 as const, grants: new GrantSet(FULL_ACCESS), expiresAt: Date.now() + 3_600_000 };
const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const listen = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'subscriptions/listen', params: { notifications: {} } });
const answer = JSON.stringify({ jsonrpc: '2.0', id: 'elicit-1', result: { action: 'accept' } });

describe('DrainGate', () => {
  const capture = captureLogger();
  let gate: DrainGate;
  let server: EdgeServer;
  /** Answers held by the last step until released. */
  let held: (() => void)[];
  beforeEach(async () => {
    gate = new DrainGate(capture.log);
    held = [];
    server = await serveEdge(
      EdgeChain.start<Exchange>()
        .use(gate.routes)
        .use<ProvenExchange>(async (exchange, next) => next({ ...exchange, identity, authInfo: { token: 'redacted', clientId: 'i1', scopes: [] } }))
        .use(requestBody({ maxBytes: 1024 * 1024, timeoutMs: 60_000 }))
        .use(gate.mcp)
        .end(async ({ res, url }) => {
          if (url.searchParams.has('hold')) await new Promise<void>((resolve) => held.push(resolve));
          res.writeHead(200);
          res.end('answered');
        }),
    );
  });
  afterEach(async () => {
    for (const release of held) release();
    await server.close();
  });

  const post = (body: string, path = '/mcp') => sendTo(new URL(path, server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('lets everything through until the broker stops', async () => {
    expect((await sendTo(new URL('/healthz', server.url))).status).toBe(200);
    expect((await post(ping)).status).toBe(200);
    expect(gate.closing).toBe(false);
  });

  it('once stopping, refuses what asks for something new, unhandled and with its connection closed, and takes what completes work owed', async () => {
    gate.close();
    const health = await sendTo(new URL('/healthz', server.url));
    expect([health.status, health.headers.connection]).toEqual([503, 'close']);
    expect(health.json()).toEqual({ error: expect.stringMatching(/^Unavailable: this broker is shutting down and did not handle the request; send it again/) });
    const request = await post(ping);
    expect([request.status, request.headers.connection]).toEqual([503, 'close']);
    expect(request.json()).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringMatching(/^Unavailable: this broker is shutting down/) },
    });
    expect((await sendTo(new URL('/mcp', server.url))).status).toBe(503);
    // A client's answer to an elicitation, and a cancellation, complete work the broker owes.
    expect((await post(answer)).status).toBe(200);
    expect((await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }))).status).toBe(200);
  });

  it('waits for the answers owed, but not for a listen stream', async () => {
    const owed = post(ping, '/mcp?hold');
    const listening = post(listen, '/mcp?hold');
    await expect.poll(() => held.length).toBe(2);
    gate.close();
    let sent = false;
    const waiting = gate.answersSent(60_000).then(() => {
      sent = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent).toBe(false);
    held[0]?.();
    await waiting;
    expect((await owed).body).toBe('answered');
    held[1]?.();
    await listening;
  });

  it('gives up waiting after its grace, saying how many answers were still owed', async () => {
    const owed = post(ping, '/mcp?hold');
    await expect.poll(() => held.length).toBe(1);
    await gate.answersSent(0);
    expect(capture.lines.at(-1)).toMatchObject({ message: 'MCP answers still owed when the broker stopped', requests: 1 });
    held[0]?.();
    await owed;
  });
});
