import type { Client } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentInfoOf, type LinkedFleet, startLinkedFleet } from '../../test/harness/linked-fleet.ts';
import { memoryClientV2 } from '../../test/harness/memory-client.ts';
import { ToolFilter } from '../auth/tool-filter.ts';
import type { SurfaceName } from './surfaces/surface.ts';

interface Result {
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/** The call of agent_info on each surface. */
const AGENT_INFO_CALL: Record<SurfaceName, [string, Record<string, unknown>]> = {
  individual: ['agent_info', { host: 'web-1' }],
  meta: ['agent', { action: 'info', params: { host: 'web-1' } }],
  dynamic: ['execute_action', { action: 'agent.info', params: { host: 'web-1' } }],
};

describe.each(['individual', 'meta', 'dynamic'] as const)('tools switched off, on the %s surface', (surface) => {
  let fleet: LinkedFleet;
  let client: Client;
  let close: () => Promise<void>;

  beforeEach(async () => {
    // The broker switches agent_info off for everyone; the identity below has list_agents off too.
    fleet = await startLinkedFleet({ tools: new ToolFilter({ disable: ['agent_info'], enable: [] }) });
    await fleet.addHost('web-1', [agentInfoOf('web-1')]);
    const identity = { ...fleet.identity(0), tools: new ToolFilter({ disable: ['fleet.list_*'], enable: [] }) };
    ({ client, close } = await memoryClientV2(fleet.mcpSession(identity, { surface, era: 'modern' }), { era: 'modern' }));
  });
  afterEach(async () => {
    await close();
    await fleet.stop();
  });

  it('are not listed, and a call of one is answered as an unknown tool', async () => {
    const tools = (await client.listTools()).tools;
    const names = tools.map((tool) => tool.name);
    if (surface === 'individual') {
      expect(names).toContain('get_fleet_status');
      expect(names).not.toContain('agent_info');
      expect(names).not.toContain('list_agents');
    }
    if (surface === 'meta') expect(names).not.toContain('agent');
    if (surface === 'dynamic') {
      const found = (await client.callTool({ name: 'find_action', arguments: { query: 'agent info labels collectors' } })) as Result;
      const ids = (found.structuredContent.matches as { id: string }[]).map((action) => action.id);
      expect(ids).not.toContain('agent.info');
      expect(ids).not.toContain('fleet.list_agents');
    }
    const [name, args] = AGENT_INFO_CALL[surface];
    const refused = (await client.callTool({ name, arguments: args })) as Result;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error).toMatchObject({ code: 'not_found' });
    expect(fleet.registry.list().every((host) => (host.session?.inFlight ?? 0) === 0)).toBe(true);
  });

  it('are left out of the catalog resources, the documents they answer, prompts and completion', async () => {
    const uris = (await client.listResources()).resources.map((resource) => resource.uri);
    expect(uris).toContain('fleet://status');
    expect(uris).not.toContain('fleet://agents');
    await expect(client.readResource({ uri: 'fleet://agents' })).rejects.toThrow(/Resource not found/);
    await expect(client.readResource({ uri: 'fleet://actions/agent.info' })).rejects.toThrow(/Resource not found/);
    const catalog = JSON.parse(((await client.readResource({ uri: 'fleet://actions' })).contents[0] as { text: string }).text);
    const ids = (catalog.actions as { id: string }[]).map((action) => action.id);
    expect(ids).toContain('fleet.status');
    expect(ids).not.toContain('agent.info');
    expect(ids).not.toContain('fleet.list_agents');
    const completed = await client.complete({ ref: { type: 'ref/resource', uri: 'fleet://actions/{id}' }, argument: { name: 'id', value: 'agent' } });
    expect(completed.completion.values).not.toContain('agent.info');
    // Both prompts walk agent_info.
    const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts).not.toContain('fleet_health_check');
    expect(prompts).not.toContain('investigate_host');
  });
});

describe('a tool filter', () => {
  it('matches tool names and action ids, an allow-list first and switched-off tools after it', () => {
    const filter = new ToolFilter({ disable: ['*_stop'], enable: ['docker.*', 'get_fleet_status'] });
    expect(filter.allows({ id: 'docker.logs', tool: 'docker_logs' })).toBe(true);
    expect(filter.allows({ id: 'docker.stop', tool: 'docker_stop' })).toBe(false);
    expect(filter.allows({ id: 'fleet.status', tool: 'get_fleet_status' })).toBe(true);
    expect(filter.allows({ id: 'swarm.scale_service', tool: 'scale_service' })).toBe(false);
    expect(ToolFilter.NONE.allows({ id: 'swarm.scale_service', tool: 'scale_service' })).toBe(true);
  });
});
