import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CATALOG } from '../../shared/catalog/catalog.ts';
import { dockerList } from '../../shared/domains/docker/docker-actions.ts';
import { getClusterStatus } from '../../shared/domains/swarm/swarm-actions.ts';
import { agentInfoOf, type LinkedAction, type LinkedFleet, type LinkedHost, startLinkedFleet } from '../../test/harness/linked-fleet.ts';
import { memoryClient, memoryClientV2 } from '../../test/harness/memory-client.ts';
import { waitFor } from '../../test/harness/wait.ts';
import { FleetServed } from './fleet-served.ts';

const silent: LinkedAction['handler'] = async () => ({ payload: null });
const serving = (name: string, ...actions: (typeof CATALOG)[number][]) => [agentInfoOf(name), ...actions.map((action) => ({ action, handler: silent }))];

describe('FleetServed', () => {
  const hello = (name: string, collectors: { name: string; available: boolean; absent?: boolean }[]) =>
    ({ name, hello: { collectors: collectors.map((c) => ({ reason: c.absent ? 'this engine is not part of a swarm' : '', ...c })) } }) as never;

  it('serves a collector some agent has (available or failed), never an absent one; broker actions always, agent ones once an agent is there', () => {
    const served = new FleetServed([
      hello('a', [
        { name: 'docker', available: false },
        { name: 'swarm', available: false, absent: true },
      ]),
    ]);
    expect(served.serves(dockerList)).toBe(true);
    expect(served.serves(getClusterStatus)).toBe(false);
    const empty = new FleetServed([]);
    expect(CATALOG.filter((action) => empty.serves(action)).every((action) => action.collector === null)).toBe(true);
    const refusal = served.hidden('get_cluster_status', getClusterStatus);
    expect(refusal).toMatchObject({ code: 'collector_unavailable', collector: 'swarm' });
    expect(refusal.message).toBe(
      'get_cluster_status is not offered: no agent this identity can see has anything for its swarm collector to collect (on a: this engine is not part of a swarm)',
    );
    expect(refusal.hint).toMatch(/appears in tools\/list/);
  });
});

describe('the tool list follows the fleet', () => {
  let fleet: LinkedFleet;
  let closers: (() => Promise<void>)[] = [];
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', serving('web-1', dockerList));
  });
  afterEach(async () => {
    for (const close of closers) await close();
    closers = [];
    await fleet.stop();
  });

  it('leaves out what no agent serves, says why when it is called, and tells a 2025 session when a manager joins and when it is gone', async () => {
    const { client, close } = await memoryClient(fleet.mcpSession(fleet.identity(3), { era: 'legacy' }));
    closers.push(close);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes += 1;
    });
    const tools = async () => (await client.listTools()).tools.map((tool) => tool.name);
    expect(await tools()).toContain('docker_list');
    expect(await tools()).not.toContain('get_cluster_status');
    const templates = async () => (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    const swarmTemplates = (await templates()).filter((uri) => uri.includes('service'));
    expect(swarmTemplates).toEqual([]);

    const hidden = await client.callTool({ name: 'get_cluster_status', arguments: {} });
    expect(hidden.isError).toBe(true);
    expect(JSON.stringify(hidden.content)).toMatch(/get_cluster_status is not offered: no agent this identity can see has anything for its swarm collector/);
    expect(JSON.stringify(hidden.content)).toMatch(/appears in tools\/list/);

    const manager: LinkedHost = await fleet.addHost('mgr-1', serving('mgr-1', getClusterStatus));
    await waitFor(() => changes >= 1);
    expect(await tools()).toContain('get_cluster_status');
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('review_capacity');
    expect((await templates()).some((uri) => uri.includes('service'))).toBe(true);

    await fleet.registry.revoke(manager.id, 'decommissioned');
    await waitFor(() => changes >= 2);
    expect(await tools()).not.toContain('get_cluster_status');
    expect((await client.listPrompts()).prompts.map((p) => p.name)).not.toContain('review_capacity');
  });

  it('tells a 2026-07-28 listener the same, and its next list is the new one', async () => {
    const { client, close } = await memoryClientV2(fleet.mcpSession(fleet.identity(3), { era: 'modern' }), { era: 'modern' });
    closers.push(close);
    let changes = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changes += 1;
    });
    const listening = await client.listen({ toolsListChanged: true });
    closers.unshift(() => listening.close());
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('get_cluster_status');
    await fleet.addHost('mgr-1', serving('mgr-1', getClusterStatus));
    await waitFor(() => changes >= 1);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('get_cluster_status');
  });
});
