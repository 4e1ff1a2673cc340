import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LinkedEndpoints, serveEndpoints } from '../../../test/harness/linked-endpoints.ts';
import { agentInfoOf, type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { MODERN_REVISION } from '../../../test/harness/mcp-client-v2.ts';
import { createIdentity } from '../../auth/identities.ts';

const IDLE_MS = 60_000;
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('SessionSweeps', () => {
  let fleet: LinkedFleet;
  let edge: LinkedEndpoints;
  const clients: ClientV2[] = [];
  const streams: AbortController[] = [];
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', [agentInfoOf('web-1')]);
    edge = await serveEndpoints(fleet, { idleMs: IDLE_MS });
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.abort();
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await edge.close();
    await fleet.stop();
  });

  const names = () => ({
    legacy: edge.legacy.liveSessions().map((session) => session.identity.name),
    modern: edge.modern.sessions().map((session) => session.identity.name),
  });

  /** A 2025-era session opened the raw way (no notification stream unless asked for): its id. */
  async function openLegacy(token: string, withStream = false): Promise<string> {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const opened = await fetch(edge.url, { method: 'POST', headers, body: INITIALIZE });
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    await opened.text();
    const session = { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    await (await fetch(edge.url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
    if (withStream) {
      const controller = new AbortController();
      streams.push(controller);
      const stream = await fetch(edge.url, { headers: { ...session, accept: 'text/event-stream' }, signal: controller.signal });
      expect(stream.status).toBe(200);
    }
    return sessionId;
  }

  async function openModern(token: string): Promise<ClientV2> {
    const client = new ClientV2({ name: 'modern', version: '2' }, { versionNegotiation: { mode: { pin: MODERN_REVISION } } });
    await client.connect(new StreamableHTTPClientTransport(edge.url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
    await client.listTools();
    return client;
  }

  it("ends the sessions and endpoint of an identity revoked since they opened, at its next round, and no one else's", async () => {
    const revoked = await createIdentity(fleet.store, { name: 'revoked', level: 0 });
    const kept = await createIdentity(fleet.store, { name: 'kept', level: 0 });
    await openLegacy(revoked.token);
    await openModern(revoked.token);
    await openLegacy(kept.token);
    expect(names()).toEqual({ legacy: ['revoked', 'kept'], modern: ['revoked'] });
    await fleet.store.identities.revoke(revoked.id, Date.now());
    await edge.sweeps.closeRevoked();
    expect(names()).toEqual({ legacy: ['kept'], modern: [] });
  });

  it('ends the sessions of an identity whose expiry passed, and keeps those of one whose expiry was extended', async () => {
    const expired = await createIdentity(fleet.store, { name: 'expired', level: 0 });
    const extended = await createIdentity(fleet.store, { name: 'extended', level: 0 });
    await openLegacy(expired.token);
    await openLegacy(extended.token);
    await openModern(expired.token);
    // As their last requests found them: both past their expiry. The store says one was extended since.
    for (const id of [expired.id, extended.id]) {
      edge.legacy.expires(id, Date.now() - 1);
      edge.modern.expires(id, Date.now() - 1);
    }
    await fleet.store.identities.extend(expired.id, Date.now() - 1);
    await edge.sweeps.closeRevoked();
    expect(names()).toEqual({ legacy: ['extended'], modern: [] });
  });

  it('ends what went unused for the idle time, but not a session with its notification stream open nor an endpoint with a listener', async () => {
    await openLegacy(await fleet.token(0, undefined, 'quiet'));
    await openLegacy(await fleet.token(0, undefined, 'streaming'), true);
    await openModern(await fleet.token(0, undefined, 'quiet-2026'));
    const listener = await openModern(await fleet.token(0, undefined, 'listening-2026'));
    const subscription = await listener.listen({ resourcesListChanged: true });
    edge.sweeps.closeIdle(Date.now() + IDLE_MS + 1);
    expect(names()).toEqual({ legacy: ['streaming'], modern: ['listening-2026'] });
    await subscription.close();
  });
});
