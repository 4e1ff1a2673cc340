import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentSetLabels } from '../../../shared/domains/agent/agent-actions.ts';
import { sendTo } from '../../../test/harness/edge-server.ts';
import { agentInfoOf, type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { MODERN_REVISION } from '../../../test/harness/mcp-client-v2.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import type { McpHttpServer } from './mcp-http-server.ts';

describe('McpHttpServer, the whole edge in process', () => {
  let fleet: LinkedFleet;
  let server: McpHttpServer;
  let url: URL;
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', [agentInfoOf('web-1')]);
    server = await fleet.serveMcp({
      routes: {
        '/healthz': (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"status":"ok"}\n');
        },
      },
    });
    url = new URL(server.url);
  });
  afterEach(() => fleet.stop());

  it('checks Host and Origin before anything, serves its open paths without a token, and asks one of /mcp alone', async () => {
    const at = (path: string, headers: Record<string, string> = {}) => sendTo(new URL(path, url), { headers });
    expect((await at('/mcp', { host: 'evil.example.com' })).status).toBe(403);
    expect((await at('/healthz', { host: 'evil.example.com' })).status).toBe(403);
    expect(await at('/healthz')).toMatchObject({ status: 200, body: '{"status":"ok"}\n' });
    expect((await at('/icons/fleetmesh.svg')).headers['content-type']).toBe('image/svg+xml');
    expect((await at('/.well-known/oauth-protected-resource/mcp')).json()).toMatchObject({ resource: server.url });
    expect((await at('/metrics')).status).toBe(404);
    const unauthorized = await at('/mcp');
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers['www-authenticate']).toBe(
      `Bearer realm="fleetmesh", resource_metadata="${url.origin}/.well-known/oauth-protected-resource/mcp"`,
    );
  });

  it('serves a 1.x client a 2025 session and a 2.x client the 2026-07-28 era, each a session of its identity', async () => {
    const token = await fleet.token(0, undefined, 'both-eras');
    const headers = { Authorization: `Bearer ${token}` };
    const legacy = new Client({ name: 'legacy', version: '1' });
    await legacy.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    const modern = new ClientV2({ name: 'modern', version: '2' }, { versionNegotiation: { mode: { pin: MODERN_REVISION } } });
    await modern.connect(new TransportV2(url, { requestInit: { headers } }));
    try {
      expect((await legacy.callTool({ name: 'agent_info', arguments: { host: 'web-1' } })).structuredContent).toMatchObject({ host: 'web-1' });
      expect((await modern.callTool({ name: 'agent_info', arguments: { host: 'web-1' } })).structuredContent).toMatchObject({ host: 'web-1' });
      expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN_REVISION);
      expect(server.liveSessions().map((session) => session.identity.name)).toEqual(['both-eras', 'both-eras']);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('closes its sessions and its port when stopped', async () => {
    const client = new Client({ name: 'stopped', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${await fleet.token(0)}` } } }));
    expect(server.liveSessions()).toHaveLength(1);
    await server.stop();
    expect(server.liveSessions()).toEqual([]);
    await expect(fetch(url, { method: 'POST' })).rejects.toThrow();
    await client.close();
  });
});

describe('McpHttpServer stopping with calls still running past its grace', () => {
  let fleet: LinkedFleet;
  afterEach(() => fleet.stop());

  it('cancels them: each caller, of either era, gets an error result saying its outcome is unknown, the agent a Cancel, the audit interrupted', async () => {
    fleet = await startLinkedFleet();
    const host = await fleet.addHost('stuck-1', [agentInfoOf('stuck-1'), { action: agentSetLabels, handler: async () => ({ payload: { labels: {} } }) }]);
    // The host takes calls and never answers them, as an agent whose change is under way.
    host.freeze();
    const server = await fleet.serveMcp({ stopGraceMs: 300 });
    const url = new URL(server.url);
    const headers = { Authorization: `Bearer ${await fleet.token(2, undefined, 'stopped-under')}` };
    const legacy = new Client({ name: 'legacy', version: '1' });
    await legacy.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    const modern = new ClientV2({ name: 'modern', version: '2' }, { versionNegotiation: { mode: { pin: MODERN_REVISION } } });
    await modern.connect(new TransportV2(url, { requestInit: { headers } }));
    const change = { name: 'set_agent_labels', arguments: { host: 'stuck-1', labels: { stage: 'blue' }, timeout_ms: 30_000 } };
    const answers = Promise.all([legacy.callTool(change), modern.callTool(change)]);
    const calls = () => host.sent.filter((frame) => frame.frame.case === 'call');
    await waitFor(() => calls().length === 2, { what: 'both calls sent to the host' });
    await server.stop();
    // Answered, not left to the clients' timeouts nor failed as a JSON-RPC error.
    for (const result of await answers) {
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'unavailable', outcome: 'unknown' } });
      expect(JSON.stringify(result.content)).toMatch(/whether it took effect is unknown/);
    }
    const cancelled = host.sent.filter((frame) => frame.frame.case === 'cancel').map((frame) => (frame.frame.value as { callId: string }).callId);
    expect(cancelled.sort()).toEqual(
      calls()
        .map((frame) => (frame.frame.value as { callId: string }).callId)
        .sort(),
    );
    const rows = await fleet.store.audit.recent({ limit: 10, identity: 'stopped-under' });
    expect(rows.map((row) => row.outcome)).toEqual(['interrupted', 'interrupted']);
    await legacy.close();
    await modern.close();
  });
});
