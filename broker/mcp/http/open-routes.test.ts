import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeServer, serveEdge } from '../../../test/harness/edge-server.ts';
import { EdgeChain } from './edge-chain.ts';
import type { Exchange } from './exchange.ts';
import { openRoutes } from './open-routes.ts';

describe('openRoutes', () => {
  let server: EdgeServer;
  beforeAll(async () => {
    const routes = {
      '/healthz': (_req: unknown, res: import('node:http').ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"status":"ok"}');
      },
    };
    server = await serveEdge(
      EdgeChain.start<Exchange>()
        .use(openRoutes(routes))
        .end(async () => {}),
    );
  });
  afterAll(() => server.close());

  it('serves its routes without a token, and hands /mcp on', async () => {
    const health = await fetch(new URL('/healthz?verbose=1', server.url));
    expect([health.status, await health.text()]).toEqual([200, '{"status":"ok"}']);
    expect((await fetch(new URL('/mcp', server.url), { method: 'POST' })).status).toBe(418);
  });

  it('answers any other path 404, naming the endpoint', async () => {
    for (const path of ['/', '/mcp/', '/healthz/', '/icons']) {
      const missing = await fetch(new URL(path, server.url));
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ error: 'not found', hint: 'The MCP endpoint is /mcp.' });
    }
  });
});
