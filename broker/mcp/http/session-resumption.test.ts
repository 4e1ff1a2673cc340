import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentInfoOf, type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import type { McpHttpServer } from './mcp-http-server.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'mover', version: '1' } },
});

describe('2025-era sessions resumed from the store (SessionResumption)', () => {
  let fleet: LinkedFleet;
  /** Two MCP servers on one store: two brokers of a cluster, as far as sessions go. */
  let a: McpHttpServer;
  let b: McpHttpServer;
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', [agentInfoOf('web-1')]);
    a = await fleet.serveMcp();
    b = await fleet.serveMcp();
  });
  afterEach(() => fleet.stop());

  const post = (server: McpHttpServer, token: string, body: unknown, sessionId?: string) =>
    fetch(server.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('serves on another broker a session it never saw, without a new initialize, and the first gives it up', async () => {
    const token = await fleet.token(0, undefined, 'mover');
    const opened = await post(a, token, INITIALIZE);
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    await opened.text();
    expect((await post(a, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).status).toBe(202);
    expect(b.liveSessions()).toEqual([]);

    const called = await post(
      b,
      token,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'agent_info', arguments: { host: 'web-1' } } },
      sessionId,
    );
    expect(called.status).toBe(200);
    expect(await called.json()).toMatchObject({ id: 2, result: { structuredContent: { host: 'web-1', availability: 'available' } } });
    expect(b.liveSessions().map((session) => session.identity.name)).toEqual(['mover']);
    // The store names b as the session's broker now: a closes its copy at its next sweep.
    await waitFor(() => a.liveSessions().length === 0, { what: 'the first broker to give the session up' });
  });

  it('resumes nothing for another identity (403) or for an id the store does not know (404)', async () => {
    const token = await fleet.token(0);
    const opened = await post(a, token, INITIALIZE);
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    await opened.text();
    const ping = { jsonrpc: '2.0', id: 3, method: 'ping' };
    expect((await post(b, await fleet.token(3), ping, sessionId)).status).toBe(403);
    expect((await post(b, token, ping, 'f0f0f0f0-0000-4000-8000-000000000000')).status).toBe(404);
    expect(b.liveSessions()).toEqual([]);
  });
});
