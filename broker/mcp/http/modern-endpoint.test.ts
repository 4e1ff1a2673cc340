import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../shared/log/logger.ts';
import { agentInfoOf, type LinkedFleet, type LinkedHost, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { MODERN_REVISION } from '../../../test/harness/mcp-client-v2.ts';
import { fetchFrom, MEMORY_URL } from '../../../test/harness/memory-client.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import { ModernEndpoint } from './modern-endpoint.ts';

describe('ModernEndpoint', () => {
  let fleet: LinkedFleet;
  let web: LinkedHost;
  let db: LinkedHost;
  let endpoint: ModernEndpoint;
  let client: ClientV2;
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    web = await fleet.addHost('web-1', [agentInfoOf('web-1')]);
    db = await fleet.addHost('db-1', [agentInfoOf('db-1')]);
    const identity = fleet.identity(0, ['host:web-*']);
    endpoint = new ModernEndpoint(fleet.mcpSession(identity, { era: 'modern' }), identity.expiresAt, () => 'https://fleet.example', silentLogger);
    client = new ClientV2({ name: 'modern', version: '2' }, { versionNegotiation: { mode: { pin: MODERN_REVISION } } });
    await client.connect(new StreamableHTTPClientTransport(MEMORY_URL, { fetch: fetchFrom(endpoint) }));
  });
  afterEach(async () => {
    await client.close();
    await endpoint.close();
    await fleet.stop();
  });

  it("serves each request from a server of its session, icons on the origin it is given for the request's URL", async () => {
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'agent_info')?.icons).toEqual([{ src: 'https://fleet.example/icons/agent.svg' }]);
    expect((await client.callTool({ name: 'agent_info', arguments: { host: 'web-1' } })).structuredContent).toMatchObject({ host: 'web-1' });
  });

  it('tells a listener of the resources it names that its identity may read, and of no other', async () => {
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri);
    });
    const subscription = await client.listen({ resourceSubscriptions: ['fleet://agents/web-1', 'fleet://agents/db-1'] });
    // The hidden host goes first: had it been told, it would have been told before the other.
    db.disconnect();
    web.disconnect();
    await waitFor(() => updates.includes('fleet://agents/web-1'), { what: 'the readable host told' });
    expect(updates).not.toContain('fleet://agents/db-1');
    await subscription.close();
  });

  it('ends its listen streams when it is closed', async () => {
    const subscription = await client.listen({ resourcesListChanged: true });
    await endpoint.close();
    expect(await subscription.closed).not.toBe('local');
  });
});
