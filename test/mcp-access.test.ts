import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../shared/catalog/catalog.ts';
import { everyDomainCollectors } from './harness/every-domain-collectors.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

describe('levels and grants', () => {
  let fleet: TestFleet;
  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 2 });
    await fleet.addAgent('web-1', { labels: { role: 'web' }, collectors: everyDomainCollectors() });
    await fleet.addAgent('web-2', { labels: { role: 'web' } });
    await fleet.addAgent('db-1', { labels: { role: 'db' } });
  });
  afterAll(async () => {
    await fleet.stop();
  });

  async function toolsOf(level: 0 | 1 | 2 | 3, grants?: string[]): Promise<string[]> {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, level, grants));
    const { tools } = await client.listTools();
    await client.close();
    return tools.map((t) => t.name).sort();
  }

  const upTo = (level: number, reads = false) =>
    CATALOG.filter((a) => a.level <= level && (!reads || a.risk === 'read'))
      .map((a) => a.tool)
      .sort();

  it('lists only the tools within the identity level, capped by the broker operations level', async () => {
    const level0 = await toolsOf(0);
    expect(level0).toEqual(upTo(0));
    expect(level0).toContain('get_fleet_status');
    expect(level0).not.toContain('docker_restart');
    const level2 = await toolsOf(2);
    expect(level2).toEqual(upTo(2));
    expect(level2).toEqual(expect.arrayContaining(['set_agent_labels', 'docker_restart', 'docker_stop']));
    // revoke_agent is level 3, above this broker's operations level of 2, whatever the identity.
    expect(await toolsOf(3)).toEqual(upTo(2));
    expect(await toolsOf(3)).not.toContain('revoke_agent');
  });

  it('refuses a tool above the level as if it did not exist', async () => {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const result = await call(client, 'set_agent_labels', { host: 'web-1', labels: { a: 'b' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toMatchObject({ code: 'not_found', message: 'unknown tool: set_agent_labels' });
    await client.close();
  });

  it('hides write tools from an identity that may write nothing', async () => {
    expect(await toolsOf(2, ['*:*=read'])).toEqual(upTo(2, true));
  });

  it('filters listings and fleet calls by grants, and answers hidden hosts as unknown', async () => {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 2, ['host:web-*=write']));
    const agents = await call(client, 'list_agents');
    expect((agents.structuredContent.agents as { name: string }[]).map((a) => a.name)).toEqual(['web-1', 'web-2']);

    const fleetWide = await call(client, 'agent_info');
    expect((fleetWide.structuredContent.hosts as { host: string }[]).map((h) => h.host)).toEqual(['web-1', 'web-2']);

    const hidden = await call(client, 'agent_info', { host: 'db-1' });
    const missing = await call(client, 'agent_info', { host: 'nope-1' });
    expect(hidden.isError).toBe(true);
    expect(hidden.structuredContent.error).toMatchObject({ code: 'not_found', message: 'no agent is called "db-1"' });
    expect(missing.structuredContent.error).toMatchObject({ code: 'not_found', message: 'no agent is called "nope-1"' });

    const bySelector = await call(client, 'agent_info', { selector: 'role=db' });
    expect(bySelector.structuredContent.error).toMatchObject({ code: 'not_found' });

    const status = await call(client, 'get_fleet_status');
    expect(status.structuredContent.counts).toMatchObject({ total: 2 });

    await expect(client.readResource({ uri: 'fleet://agents/db-1' })).rejects.toThrow(/Resource not found/);
    await expect(client.readResource({ uri: 'fleet://agents/nope' })).rejects.toThrow(/Resource not found/);
    const visible = await readJson(client, 'fleet://agents/web-1');
    expect(visible.name).toBe('web-1');
    await client.close();
  });

  it('needs a write grant on every host a change targets', async () => {
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 2, ['host:*=read', 'host:web-1=write']));
    const allowed = await call(client, 'set_agent_labels', { host: 'web-1', labels: { tier: 'front' } });
    expect(allowed.isError).toBeFalsy();
    expect(allowed.structuredContent.labels).toMatchObject({ role: 'web', tier: 'front' });
    const refused = await call(client, 'set_agent_labels', { hosts: ['web-1', 'web-2'], labels: { tier: 'front' } });
    expect(refused.structuredContent.error).toMatchObject({ code: 'forbidden' });
    expect(String((refused.structuredContent.error as { message: string }).message)).toContain('web-2');
    await client.close();
  });

  it('shows the audit log as a resource to level-3 identities only', async () => {
    const high = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    // The broker caps the level at 2, so not even a level-3 identity reads it here.
    expect((await high.listResources()).resources.map((r) => r.uri)).not.toContain('fleet://audit');
    await expect(high.readResource({ uri: 'fleet://audit' })).rejects.toThrow(/Resource not found/);
    await high.close();
  });
});
