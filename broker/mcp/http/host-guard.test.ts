import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLogger } from '../../../test/harness/capture-logger.ts';
import { type EdgeServer, sendTo, serveEdge } from '../../../test/harness/edge-server.ts';
import { EdgeChain } from './edge-chain.ts';
import type { Exchange } from './exchange.ts';
import { hostGuard } from './host-guard.ts';

describe('hostGuard', () => {
  const capture = captureLogger();
  let loopback: EdgeServer;
  let listed: EdgeServer;
  beforeAll(async () => {
    const guarded = (allowedHosts: string[], allowedOrigins: string[]) => {
      let port = 0;
      const handle = EdgeChain.start<Exchange>()
        .use(hostGuard({ allowedHosts, allowedOrigins, port: () => port, log: capture.log }))
        .end(async () => {});
      return serveEdge(handle).then((server) => {
        port = server.port;
        return server;
      });
    };
    loopback = await guarded([], []);
    listed = await guarded(['fleet.example:443', 'mcp.internal:7400'], ['https://fleet.example']);
  });
  afterAll(async () => {
    await loopback.close();
    await listed.close();
  });

  const get = (server: EdgeServer, path: string, headers: Record<string, string>) => sendTo(new URL(path, server.url), { headers });

  it('hands on loopback names at its port, with or without a loopback Origin', async () => {
    const port = loopback.port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      expect((await get(loopback, '/mcp', { host })).status).toBe(418);
      expect((await get(loopback, '/mcp', { host, origin: `http://${host}` })).status).toBe(418);
    }
  });

  it('refuses a foreign Host or Origin on every path, as JSON-RPC on /mcp and as plain JSON elsewhere, and logs it', async () => {
    const rebinding = await get(loopback, '/mcp', { host: 'evil.example.com' });
    expect(rebinding.status).toBe(403);
    expect(rebinding.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: expect.stringMatching(/DNS rebinding/) }, id: null });
    const metrics = await get(loopback, '/metrics', { origin: 'http://evil.example.com' });
    expect(metrics.status).toBe(403);
    expect(metrics.json()).toEqual({ error: expect.stringMatching(/Host or Origin header is not allowed.*--mcp-allowed-hosts/) });
    // Another port of this host is another origin.
    expect((await get(loopback, '/healthz', { origin: `http://127.0.0.1:${loopback.port + 1}` })).status).toBe(403);
    expect(capture.lines.filter((line) => line.message === 'HTTP request refused: Host or Origin not allowed').length).toBeGreaterThanOrEqual(3);
  });

  it('takes the names and origins it is given instead of loopback, case aside', async () => {
    expect((await get(listed, '/mcp', { host: 'FLEET.example:443', origin: 'https://fleet.EXAMPLE' })).status).toBe(418);
    expect((await get(listed, '/mcp', { host: 'mcp.internal:7400' })).status).toBe(418);
    expect((await get(listed, '/mcp', { host: `127.0.0.1:${listed.port}` })).status).toBe(403);
    expect((await get(listed, '/mcp', { host: 'fleet.example:443', origin: 'http://fleet.example' })).status).toBe(403);
  });
});
