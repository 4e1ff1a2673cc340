import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { call, identityToken, mcpClient, readJson, text } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

describe('resources, prompts and text', () => {
  let fleet: TestFleet;
  afterEach(async () => {
    await fleet.stop();
  });

  it('notifies subscribers when an agent changes state', async () => {
    fleet = await startTestFleet();
    const agent = await fleet.addAgent('watched');
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updated.push(notification.params.uri);
    });
    await client.subscribeResource({ uri: 'fleet://agents/watched' });
    await client.subscribeResource({ uri: 'fleet://status' });
    await fleet.stopAgent(agent);
    await waitFor(() => updated.includes('fleet://agents/watched') && updated.includes('fleet://status'), { what: 'resource updates' });
    expect(updated).not.toContain('fleet://agents');
    expect((await readJson(client, 'fleet://agents/watched')).state).toBe('offline');
    expect((await readJson(client, 'fleet://status')).counts).toMatchObject({ offline: 1 });
    await expect(client.subscribeResource({ uri: 'fleet://agents/nobody' })).rejects.toThrow(/Resource not found/);
    await client.close();
  });

  it('offers prompts within the identity level, and completes host names', async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('web-1');
    await fleet.addAgent('web-2');
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([
      'diagnose_service',
      'explain_unschedulable',
      'fleet_health_check',
      'investigate_host',
      'review_capacity',
    ]);
    const prompt = await client.getPrompt({ name: 'investigate_host', arguments: { host: 'web-1' } });
    expect(prompt.messages[0]?.content).toMatchObject({ type: 'text', text: expect.stringContaining('host: "web-1"') });
    const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'investigate_host' }, argument: { name: 'host', value: 'web' } });
    expect(completion.completion.values).toEqual(['web-1', 'web-2']);
    await client.close();
  });

  it('renders a fleet answer as a Markdown table, or as JSON with --text-format json', async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('web-1', { labels: { role: 'web' } });
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const markdown = text(await call(client, 'list_agents'));
    expect(markdown).toMatch(/^\*\*List agents\*\*/);
    expect(markdown).toMatch(/\| name \| state \| version \| labels \| last_seen_unix_ms \|/);
    expect(markdown).toMatch(/\| `web-1` \| `online` \|/);
    expect(markdown).toMatch(/Fields not in the table: id, collectors/);
    await client.close();

    await fleet.restartBroker({ textFormat: 'json' });
    await waitFor(() => fleet.broker.registry.find('web-1')?.state === 'online');
    const jsonClient = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const result = await call(jsonClient, 'list_agents');
    expect(JSON.parse(text(result))).toEqual(result.structuredContent);
    await jsonClient.close();
  });
});
