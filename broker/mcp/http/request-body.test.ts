import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, sendTo, serveEdge } from '../../../test/harness/edge-server.ts';
import { FULL_ACCESS, GrantSet } from '../../auth/grants.ts';
import { EdgeChain } from './edge-chain.ts';
import type { Exchange, McpExchange, ProvenExchange } from './exchange.ts';
import { requestBody } from './request-body.ts';

const identity = { id: 'i1', name: 'reader', level: 0 as const, grants: new GrantSet(FULL_ACCESS), expiresAt: Date.now() + 3_600_000 };

describe('requestBody', () => {
  let server: EdgeServer;
  const seen: Pick<McpExchange, 'body' | 'parsed'>[] = [];
  beforeAll(async () => {
    server = await serveEdge(
      EdgeChain.start<Exchange>()
        .use<ProvenExchange>(async (exchange, next) => next({ ...exchange, identity, authInfo: { token: 'redacted', clientId: 'i1', scopes: [] } }))
        .use(requestBody({ maxBytes: 1024, timeoutMs: 60_000 }))
        .end(async ({ body, parsed }) => {
          seen.push({ body, parsed });
        }),
    );
  });
  afterAll(() => server.close());

  const post = (body: string) => sendTo(new URL('/mcp', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('hands on a POST body whole, parsed when it is JSON and as it came when not', async () => {
    seen.length = 0;
    expect((await post('{"jsonrpc":"2.0","id":1,"method":"ping"}')).status).toBe(418);
    expect((await post('{"jsonrpc": ')).status).toBe(418);
    expect((await post('')).status).toBe(418);
    expect(seen.map(({ body, parsed }) => [body?.toString(), parsed])).toEqual([
      ['{"jsonrpc":"2.0","id":1,"method":"ping"}', { jsonrpc: '2.0', id: 1, method: 'ping' }],
      ['{"jsonrpc": ', undefined],
      ['', undefined],
    ]);
  });

  it('reads nothing of a GET or a DELETE', async () => {
    seen.length = 0;
    expect((await sendTo(new URL('/mcp', server.url))).status).toBe(418);
    expect((await sendTo(new URL('/mcp', server.url), { method: 'DELETE' })).status).toBe(418);
    expect(seen).toEqual([
      { body: undefined, parsed: undefined },
      { body: undefined, parsed: undefined },
    ]);
  });

  it('answers a body over its limit 413 as an invalid request, and closes the connection', async () => {
    const refused = await post(`"${'x'.repeat(2048)}"`);
    expect(refused.status).toBe(413);
    expect(refused.headers.connection).toBe('close');
    expect(refused.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: expect.stringMatching(/^Invalid Request: the request body is larger than 1 KiB.*Send a smaller request/) },
      id: null,
    });
  });
});
