import type { Client as ClientV2 } from '@modelcontextprotocol/client';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { everyDomainCollectors } from './harness/every-domain-collectors.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { callV2, MODERN_REVISION, mcpClientV2, readJsonV2 } from './harness/mcp-client-v2.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

describe('both protocol eras on one broker', () => {
  let fleet: TestFleet;
  let web: Agent;
  let db: Agent;
  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 1 });
    web = await fleet.addAgent('era-web', { labels: { role: 'web' } });
    db = await fleet.addAgent('era-db', { labels: { role: 'db' }, collectors: everyDomainCollectors() });
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('a 1.x client (2025 handshake) and a 2.x client (2026-07-28) list and call the same tools, read and subscribe to the same resource', async () => {
    const token = await identityToken(fleet.broker, 1);
    const legacy = await mcpClient(fleet.broker, token);
    const modern: ClientV2 = await mcpClientV2(fleet.broker, token);
    try {
      expect(legacy.getServerVersion()?.name).toBe('fleetmesh');
      expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN_REVISION);

      const legacyTools = (await legacy.listTools()).tools.map((t) => t.name).sort();
      const modernTools = (await modern.listTools()).tools.map((t) => t.name).sort();
      expect(modernTools).toEqual(legacyTools);
      expect(modernTools).toContain('agent_info');

      const fromLegacy = await call(legacy, 'agent_info', { host: 'era-db' });
      const fromModern = await callV2(modern, 'agent_info', { host: 'era-db' });
      expect(fromLegacy.structuredContent).toMatchObject({ host: 'era-db', availability: 'available', labels: { role: 'db' } });
      expect(fromModern.structuredContent).toMatchObject({ host: 'era-db', availability: 'available', labels: { role: 'db' } });

      expect((await readJson(legacy, 'fleet://agents/era-web')).name).toBe('era-web');
      expect((await readJsonV2(modern, 'fleet://agents/era-web')).name).toBe('era-web');
      // Served from the broker's latest state: a 2026-07-28 client may reuse it briefly; a 2025 answer has no such field.
      expect(await modern.readResource({ uri: 'fleet://agents/era-web' })).toMatchObject({ ttlMs: 5000, cacheScope: 'private' });
      expect(await legacy.readResource({ uri: 'fleet://agents/era-web' })).not.toHaveProperty('ttlMs');

      const legacyUpdates: string[] = [];
      legacy.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        legacyUpdates.push(n.params.uri);
      });
      await legacy.subscribeResource({ uri: 'fleet://agents/era-web' });
      const modernUpdates: string[] = [];
      modern.setNotificationHandler('notifications/resources/updated', (n) => {
        modernUpdates.push(n.params.uri);
      });
      const subscription = await modern.listen({ resourceSubscriptions: ['fleet://agents/era-web'] });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['fleet://agents/era-web']);

      await fleet.stopAgent(web);
      await waitFor(() => legacyUpdates.includes('fleet://agents/era-web') && modernUpdates.includes('fleet://agents/era-web'), {
        what: 'both clients told of the change',
      });
      expect((await readJsonV2(modern, 'fleet://agents/era-web')).state).toBe('offline');
      await subscription.close();
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('shows a grant-limited 2026-07-28 client the resources, completion and prompts its grants allow, as the 2025 era does', async () => {
    const token = await identityToken(fleet.broker, 1, ['host:era-db']);
    const modern = await mcpClientV2(fleet.broker, token);
    const legacy = await mcpClient(fleet.broker, token);
    try {
      const listed = (await modern.listResources()).resources.map((r) => r.uri);
      expect(listed).toEqual((await legacy.listResources()).resources.map((r) => r.uri));
      expect(listed).toContain('fleet://hosts/era-db');
      expect(JSON.stringify(listed)).not.toContain('era-web');
      // Hidden answers as missing does, naming only the URI asked for (SEP-2164).
      await expect(modern.readResource({ uri: 'fleet://hosts/era-web' })).rejects.toMatchObject({
        message: expect.stringMatching(/not found/i),
        data: { uri: 'fleet://hosts/era-web' },
      });
      // A host's digest is served from the fleet index, so a 2026-07-28 reader may reuse it for a while.
      expect(await modern.readResource({ uri: 'fleet://hosts/era-db' })).toMatchObject({ ttlMs: 5000, cacheScope: 'private' });

      const completion = await modern.complete({ ref: { type: 'ref/resource', uri: 'fleet://hosts/{host}' }, argument: { name: 'host', value: 'era' } });
      expect(completion.completion.values).toEqual(['era-db']);

      const prompts = (await modern.listPrompts()).prompts.map((p) => p.name);
      expect(prompts).toEqual((await legacy.listPrompts()).prompts.map((p) => p.name));
      expect(prompts).toContain('investigate_host');
      await expect(modern.getPrompt({ name: 'investigate_host', arguments: { host: 'era-web' } })).rejects.toThrow(/no host "era-web"/);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it('tells a 2026-07-28 listener nothing about a resource its identity may not read', async () => {
    const limited = await mcpClientV2(fleet.broker, await identityToken(fleet.broker, 0, ['host:era-db']));
    try {
      await expect(limited.readResource({ uri: 'fleet://agents/era-web' })).rejects.toThrow(/not found/i);
      const updates: string[] = [];
      limited.setNotificationHandler('notifications/resources/updated', (n) => {
        updates.push(n.params.uri);
      });
      const subscription = await limited.listen({ resourceSubscriptions: ['fleet://agents/era-web', 'fleet://agents/era-db'] });
      await fleet.stopAgent(db);
      await waitFor(() => updates.includes('fleet://agents/era-db'), { what: 'the visible host reported' });
      expect(updates).not.toContain('fleet://agents/era-web');
      await subscription.close();
    } finally {
      await limited.close();
    }
  });

  it('ends the 2026-07-28 listen stream of an identity revoked while it listens, and refuses its next request', async () => {
    const token = await identityToken(fleet.broker, 0, undefined, 'era-revocable');
    const client = await mcpClientV2(fleet.broker, token);
    try {
      const subscription = await client.listen({ resourcesListChanged: true });
      const row = await fleet.broker.store.identities.findLiveByName('era-revocable');
      await fleet.broker.store.identities.revoke(row?.id ?? '', Date.now());
      expect(await subscription.closed).not.toBe('local');
      await expect(client.listTools()).rejects.toThrow(/401|Unauthorized/);
    } finally {
      await client.close().catch(() => {});
    }
  });
});
