import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LinkedEndpoints, serveEndpoints } from '../../../test/harness/linked-endpoints.ts';
import { agentInfoOf, type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import { MODERN_REVISION } from '../../../test/harness/mcp-client-v2.ts';
import { createIdentity } from '../../auth/identities.ts';

describe('ModernEndpoints', () => {
  let fleet: LinkedFleet;
  let edge: LinkedEndpoints;
  const clients: ClientV2[] = [];
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', [agentInfoOf('web-1')]);
    edge = await serveEndpoints(fleet, { idleMs: 60_000 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await edge.close();
    await fleet.stop();
  });

  async function connect(token: string): Promise<ClientV2> {
    const client = new ClientV2({ name: 'modern', version: '2' }, { versionNegotiation: { mode: { pin: MODERN_REVISION } } });
    await client.connect(new StreamableHTTPClientTransport(edge.url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  it('gives each identity one endpoint, which all its clients share, and hands 2025-era traffic to its own step', async () => {
    const ops = await fleet.token(0, undefined, 'ops');
    const [first, second] = [await connect(ops), await connect(ops)];
    const other = await connect(await fleet.token(0, undefined, 'other'));
    for (const client of [first, second, other]) expect((await client.callTool({ name: 'agent_info', arguments: { host: 'web-1' } })).isError).toBeFalsy();
    expect(
      edge.modern
        .sessions()
        .map((session) => session.identity.name)
        .sort(),
    ).toEqual(['ops', 'other']);
    expect(edge.legacy.size).toBe(0);
  });

  it('ends the endpoint of an identity, and with it the listen streams it serves', async () => {
    const { token, id } = await createIdentity(fleet.store, { name: 'ended', level: 0 });
    const client = await connect(token);
    const subscription = await client.listen({ resourcesListChanged: true });
    expect(edge.modern.size).toBe(1);
    edge.modern.end(id);
    expect(await subscription.closed).not.toBe('local');
    expect(edge.modern.size).toBe(0);
  });
});
