import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHealthRoutes } from '../broker/health/health-routes.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

/** A request without credentials on a connection of its own, as a probe or a scraper sends it. */
function probe(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string; type: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, type: res.headers['content-type'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A port nothing listens on. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('health endpoints', () => {
  let fleet: TestFleet;
  let base: string;
  beforeAll(async () => {
    fleet = await startTestFleet();
    base = new URL(fleet.broker.mcpUrl).origin;
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('the broker answers /healthz and /readyz without a token', async () => {
    expect(await probe(`${base}/healthz`)).toMatchObject({ status: 200, text: '{"status":"ok"}\n' });
    const ready = await probe(`${base}/readyz`, { headers: { host: `localhost:${new URL(base).port}` } });
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toEqual({ ready: true, checks: { store: 'ok', agents_listener: 'ok' } });
    expect((await probe(`${base}/readyz`, { method: 'POST' })).status).toBe(405);
  });

  it('checks the Host and Origin of every unauthenticated route as it does for /mcp (DNS rebinding)', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/.well-known/oauth-protected-resource/mcp']) {
      expect((await probe(`${base}${path}`)).status).toBe(200);
      const rebound = await probe(`${base}${path}`, { headers: { host: `evil.example:${new URL(base).port}` } });
      expect(rebound.status).toBe(403);
      expect(rebound.text).toMatch(/Host or Origin header is not allowed/);
      expect((await probe(`${base}${path}`, { headers: { origin: 'http://evil.example' } })).status).toBe(403);
    }
  });

  it('the broker serves Prometheus metrics: agents by state, calls by tool and outcome, fan-out latency', async () => {
    await fleet.addAgent('metrics-1');
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1));
    await call(client, 'list_agents');
    await call(client, 'agent_info', { host: 'metrics-1' });
    await call(client, 'agent_info', { host: 'nowhere' });
    await client.close();
    const { status, text, type } = await probe(`${base}/metrics`);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toMatch(/^fleetmesh_agents\{state="online"\} 1$/m);
    expect(text).toMatch(/^fleetmesh_tool_calls_total\{tool="list_agents",outcome="ok"\} 1$/m);
    expect(text).toMatch(/^fleetmesh_tool_calls_total\{tool="agent_info",outcome="ok"\} 1$/m);
    expect(text).toMatch(/^fleetmesh_tool_calls_total\{tool="agent_info",outcome="refused"\} 1$/m);
    expect(text).toMatch(/^fleetmesh_fanout_duration_seconds_count 1$/m);
    expect(text).toMatch(/^fleetmesh_fanout_duration_seconds_bucket\{le="\+Inf"\} 1$/m);
    // The agent's connection went through the admission gate: handed to TLS, its first call made, nothing left waiting.
    expect(text).toMatch(/^fleetmesh_admission_connections_total\{outcome="established"\} [1-9]\d*$/m);
    expect(text).toMatch(/^fleetmesh_admission_handed_over_total [1-9]\d*$/m);
    expect(text).toMatch(/^fleetmesh_admission_pending\{stage="waiting"\} 0$/m);
  });

  it('the broker asks for a bearer token on /metrics when given one, and audits a wrong one', async () => {
    const guarded = await startTestFleet({ metricsToken: 'scrape-secret' });
    try {
      const origin = new URL(guarded.broker.mcpUrl).origin;
      const bare = await probe(`${origin}/metrics`);
      expect(bare.status).toBe(401);
      expect((await probe(`${origin}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      const scraped = await probe(`${origin}/metrics`, { headers: { authorization: 'Bearer scrape-secret' } });
      expect(scraped.status).toBe(200);
      expect(scraped.text).toMatch(/^fleetmesh_agents\{state="online"\} 0$/m);
      // Probes need no token.
      expect((await probe(`${origin}/healthz`)).status).toBe(200);
      expect((await guarded.broker.store.audit.recent({ limit: 10, refused: true })).map((row) => [row.tool, row.reason])).toEqual([
        ['/metrics', 'the /metrics bearer token is wrong'],
      ]);
    } finally {
      await guarded.stop();
    }
  });

  it('the agent answers /readyz 200 while connected and 503 while not, and /healthz 200 either way', async () => {
    const connected = await fleet.addAgent('probed', { healthListen: '127.0.0.1:0' });
    const port = connected.health?.port;
    expect(await probe(`http://127.0.0.1:${port}/readyz`)).toMatchObject({ status: 200, text: '{"ready":true}\n' });
    expect(await probe(`http://127.0.0.1:${port}/healthz`)).toMatchObject({ status: 200, text: '{"status":"ok","connected":true}\n' });
    await fleet.stopAgent(connected);

    // The same enrolled agent, pointed at an address where no broker answers.
    const cutOff = await fleet.addAgent('probed', { healthListen: `127.0.0.1:${port}`, brokerAddress: `localhost:${await deadPort()}`, waitOnline: false });
    expect(cutOff.connection.connected).toBe(false);
    expect(await probe(`http://127.0.0.1:${port}/readyz`)).toMatchObject({ status: 503, text: '{"ready":false,"reason":"not connected to the broker"}\n' });
    expect(await probe(`http://127.0.0.1:${port}/healthz`)).toMatchObject({ status: 200, text: '{"status":"ok","connected":false}\n' });
    expect((await probe(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    await expect(fleet.addAgent('probed-2', { healthListen: `127.0.0.1:${port}`, waitOnline: false })).rejects.toThrow(
      /cannot serve health on .* already in use/,
    );
  });
});

describe('the broker readiness route', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('answers 503 naming each failing check', async () => {
    const routes = createHealthRoutes({
      readiness: () => ({ store: 'closed', agents_listener: undefined }),
      metrics: () => '',
      metricsToken: undefined,
      onTokenRefused: () => {},
    });
    server = createServer((req, res) => routes[new URL(req.url ?? '/', 'http://x').pathname]?.(req, res));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const ready = await probe(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text)).toEqual({ ready: false, checks: { store: 'closed', agents_listener: 'ok' } });
  });
});
