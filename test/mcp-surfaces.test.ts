import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { CATALOG, domains } from '../shared/catalog/catalog.ts';
import { everyDomainCollectors } from './harness/every-domain-collectors.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { nextEvent } from './harness/wait.ts';

/** Fields that change from one call to the next whatever the surface (live figures: CPU may cross a threshold mid-run). */
const VOLATILE = new Set([
  'hot_hosts',
  'healthy',
  'uptime_s',
  'sample',
  'sampled_at_unix_ms',
  'last_seen_unix_ms',
  'state_since_unix_ms',
  'started_at_unix_ms',
]);

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !VOLATILE.has(k))
        .map(([k, v]) => [k, stable(v)]),
    );
  return value;
}

/** How each surface calls an action: the same action and arguments, three calling shapes. */
async function invoke(client: Client, surface: string, tool: string, args: Record<string, unknown>) {
  const action = CATALOG.find((a) => a.tool === tool);
  if (!action) throw new Error(`no action for ${tool}`);
  const { confirm, ...params } = args;
  if (surface === 'individual') return call(client, tool, args);
  if (surface === 'meta')
    return call(client, action.id.split('.')[0] as string, { action: action.id.split('.')[1], params, ...(confirm !== undefined ? { confirm } : {}) });
  return call(client, 'execute_action', { action: action.id, params, ...(confirm !== undefined ? { confirm } : {}) });
}

const CALLS: [string, Record<string, unknown>][] = [
  ['set_agent_labels', { host: 'db-1', labels: { tier: 'data' } }],
  ['get_fleet_status', {}],
  ['list_agents', { selector: 'role=web' }],
  ['agent_info', { host: 'web-1' }],
  ['agent_info', { hosts: ['web-1', 'db-1'] }],
  ['agent_info', { host: 'wbe-1' }],
  ['agent_info', { watch_ms: -1 }],
  ['revoke_agent', { host: 'db-1' }],
];

describe('tool surfaces', () => {
  let fleet: TestFleet;
  const agents: Agent[] = [];
  const results: Record<string, unknown[]> = {};
  const tools: Record<string, string[]> = {};
  const catalogs: Record<string, { actions: { id: string; tool: string; call: string }[] }> = {};

  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 3 });
    agents.push(
      await fleet.addAgent('web-1', { labels: { role: 'web' }, collectors: everyDomainCollectors() }),
      await fleet.addAgent('db-1', { labels: { role: 'db' } }),
    );
    for (const surface of ['individual', 'meta', 'dynamic'] as const) {
      if (surface !== 'individual') {
        const back = agents.map((a) => nextEvent(a.connection, 'connected'));
        await fleet.restartBroker({ toolSurface: surface });
        await Promise.all(back);
      }
      const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
      tools[surface] = (await client.listTools()).tools.map((t) => t.name).sort();
      catalogs[surface] = await readJson(client, 'fleet://actions');
      results[surface] = [];
      for (const [tool, args] of CALLS) results[surface]?.push(stable((await invoke(client, surface, tool, args)).structuredContent));
      await client.close();
    }
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('projects the one catalog three ways', () => {
    expect(tools.individual).toEqual(CATALOG.map((a) => a.tool).sort());
    // One tool per domain: every folder of shared/domains.
    expect(tools.meta).toEqual(domains().sort());
    expect(tools.dynamic).toEqual(['execute_action', 'find_action']);
  });

  it('reaches every action on every surface with the same result', () => {
    expect(results.meta).toEqual(results.individual);
    expect(results.dynamic).toEqual(results.individual);
    // And the results are real ones, not three identical failures.
    expect(results.individual?.[0]).toMatchObject({ host: 'db-1', labels: { role: 'db', tier: 'data' } });
    expect(results.individual?.[3]).toMatchObject({ host: 'web-1', availability: 'available' });
    expect(results.individual?.[5]).toMatchObject({ error: { code: 'not_found' } });
    expect(results.individual?.[6]).toMatchObject({ error: { code: 'invalid_argument' } });
    expect(results.individual?.[7]).toMatchObject({ error: { code: 'confirm_required' }, targets: [{ host: 'db-1' }] });
  });

  it('publishes the catalog as each surface sees it', () => {
    const labels = (surface: string) => catalogs[surface]?.actions.find((a) => a.id === 'agent.set_labels');
    expect(labels('individual')).toMatchObject({ tool: 'set_agent_labels', call: expect.stringMatching(/^set_agent_labels \{"labels":"…"\}/) });
    expect(labels('meta')).toMatchObject({ tool: 'agent', call: expect.stringMatching(/^agent \{"action":"set_labels"/) });
    expect(labels('dynamic')).toMatchObject({ tool: 'execute_action', call: expect.stringMatching(/^execute_action \{"action":"agent.set_labels"/) });
    expect(catalogs.dynamic?.actions).toHaveLength(CATALOG.length);
  });
});

describe('the dynamic and individual surfaces', () => {
  let fleet: TestFleet;
  beforeAll(async () => {
    fleet = await startTestFleet({ toolSurface: 'dynamic', operationsLevel: 1 });
    await fleet.addAgent('web-1', { collectors: everyDomainCollectors() });
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('finds actions by words, tolerating typos, with full schemas for the best matches', async () => {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1));
    const found = await call(client, 'find_action', { query: 'list agnets' });
    const matches = found.structuredContent.matches as { id: string; input_schema?: unknown; parameters?: string[] }[];
    // set_agent_labels is level 2: above this broker's level, so it is not found at all.
    expect(matches.map((m) => m.id)).not.toContain('agent.set_labels');
    expect(matches[0]?.id).toBe('fleet.list_agents');
    expect(matches[0]?.input_schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
    const status = await call(client, 'find_action', { query: 'fleet staus' });
    expect((status.structuredContent.matches as { id: string }[])[0]?.id).toBe('fleet.status');
    await client.close();
  });

  it('answers an unknown action id with the closest ones, and checks parameters before sending', async () => {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1));
    const unknown = await call(client, 'execute_action', { action: 'agent.infos' });
    expect(unknown.structuredContent.error).toMatchObject({ code: 'not_found', closest: expect.arrayContaining(['agent.info']) });
    const bad = await call(client, 'execute_action', { action: 'agent.info', params: { watch_ms: 'soon' } });
    expect(bad.structuredContent.error).toMatchObject({ code: 'invalid_argument' });
    const byTool = await call(client, 'execute_action', { action: 'agent_info', params: { host: 'web-1' } });
    expect(byTool.structuredContent).toMatchObject({ host: 'web-1', availability: 'available' });
    await client.close();
  });

  it('advertises compact tools with their hints, and the full schemas on demand', async () => {
    await fleet.restartBroker({ toolSurface: 'individual' });
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1));
    const { tools } = await client.listTools();
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.outputSchema).toBeUndefined();
      // Hints at the spec's defaults are left out, except destructiveHint, which every tool that writes states.
      if (!tool.annotations?.readOnlyHint) expect(typeof tool.annotations?.destructiveHint).toBe('boolean');
    }
    expect(tools.find((t) => t.name === 'agent_info')?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(tools.find((t) => t.name === 'docker_stop')?.annotations).toEqual({ destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(tools.find((t) => t.name === 'docker_start')?.annotations).toEqual({ destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const full = await readJson(client, 'fleet://actions/docker.logs');
    expect(full.input_schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', additionalProperties: false });
    expect(full.input_schema.properties.lines).toMatchObject({ maximum: 5000 });
    expect(full.output_schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    await client.close();
  });
});
