import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendTo } from '../../../test/harness/edge-server.ts';
import { agentInfoOf, type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { MODERN_REVISION } from '../../../test/harness/mcp-client-v2.ts';
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
