import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { everyDomainCollectors } from './harness/every-domain-collectors.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

/** Every page of resources/list. */
async function everyResource(client: Client) {
  const all: { uri: string; name: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    all.push(...page.resources);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** The error a promise rejects with, as text with the name asked for replaced, to compare a hidden name's answer with a missing one's. */
async function refusal(promise: Promise<unknown>, name: string): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: Error) => e,
  );
  expect(error, `expected ${name} to be refused`).toBeInstanceOf(Error);
  return (error as Error).message.replaceAll(name, 'NAME').replace(/Closest: [^.]*\. /g, '');
}

/**
 * An identity that may see only `host:web-*` never learns of db-1 by any
 * route: tools, resources (list, read, subscribe), notifications, completion
 * or prompts. A full-access witness sees the same fleet, to show that what the
 * limited identity is not told did happen.
 */
describe('grants on every route', () => {
  let fleet: TestFleet;
  let limited: Client;
  let witness: Client;
  let db: Agent;
  let web2: Agent;

  beforeAll(async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('web-1', { collectors: everyDomainCollectors() });
    web2 = await fleet.addAgent('web-2');
    db = await fleet.addAgent('db-1');
    limited = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, ['host:web-*']));
    witness = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
  });
  afterAll(async () => {
    await limited?.close();
    await witness?.close();
    await fleet?.stop();
  });

  it('tools answer only of the hosts it may see, and a hidden host like a missing one', async () => {
    for (const [tool, args] of [
      ['list_agents', {}],
      ['get_fleet_status', {}],
      ['find', {}],
      ['find', { type: 'host' }],
    ] as const) {
      const result = await call(limited, tool, args);
      expect(JSON.stringify(result), tool).not.toContain('db-1');
    }
    expect(JSON.stringify(await call(witness, 'find', { type: 'host' }))).toContain('db-1');
    const hidden = await call(limited, 'describe', { type: 'host', id: 'db-1' });
    const missing = await call(limited, 'describe', { type: 'host', id: 'zz-9' });
    expect(hidden.isError).toBe(true);
    expect((hidden.structuredContent.error as { code: string }).code).toBe((missing.structuredContent.error as { code: string }).code);
    expect(
      JSON.stringify(hidden)
        .replaceAll('db-1', 'NAME')
        .replace(/Closest: [^.]*\. /g, '')
        .replace(/"closest":\[[^\]]*\]/, '"closest":[]'),
    ).toBe(
      JSON.stringify(missing)
        .replaceAll('zz-9', 'NAME')
        .replace(/Closest: [^.]*\. /g, '')
        .replace(/"closest":\[[^\]]*\]/, '"closest":[]'),
    );
  });

  it('resources list, read and subscribe only what it may see; find and describe link to them', async () => {
    const listed = await everyResource(limited);
    expect(listed.map((r) => r.uri)).toEqual(expect.arrayContaining(['fleet://hosts/web-1', 'fleet://hosts/web-2']));
    expect(JSON.stringify(listed)).not.toContain('db-1');
    expect((await everyResource(witness)).map((r) => r.uri)).toContain('fleet://hosts/db-1');
    expect(await readJson(limited, 'fleet://hosts/web-1')).toMatchObject({ type: 'host', name: 'web-1' });
    for (const uri of ['fleet://agents', 'fleet://status', 'fleet://recommendations'])
      expect(JSON.stringify(await readJson(limited, uri))).not.toContain('db-1');
    for (const [hidden, missing] of [
      ['fleet://hosts/db-1', 'fleet://hosts/zz-9'],
      ['fleet://agents/db-1', 'fleet://agents/zz-9'],
    ] as const) {
      expect(await refusal(limited.readResource({ uri: hidden }), 'db-1')).toBe(await refusal(limited.readResource({ uri: missing }), 'zz-9'));
      expect(await refusal(limited.subscribeResource({ uri: hidden }), 'db-1')).toBe(await refusal(limited.subscribeResource({ uri: missing }), 'zz-9'));
    }
    const found = await call(limited, 'find', { type: 'host' });
    expect(found.content.filter((c) => c.type === 'resource_link').map((c) => (c as { uri: string }).uri)).toEqual([
      'fleet://hosts/web-1',
      'fleet://hosts/web-2',
    ]);
    const described = await call(limited, 'describe', { type: 'host', id: 'web-2' });
    expect(described.content).toContainEqual(expect.objectContaining({ type: 'resource_link', uri: 'fleet://hosts/web-2' }));
  });

  it('completes only names it may see, and prompts take only those', async () => {
    for (const ref of [
      { type: 'ref/resource', uri: 'fleet://hosts/{host}' },
      { type: 'ref/resource', uri: 'fleet://agents/{name}' },
      { type: 'ref/prompt', name: 'investigate_host' },
    ] as const) {
      const argument = ref.type === 'ref/prompt' ? 'host' : ref.uri.includes('{host}') ? 'host' : 'name';
      const completion = await limited.complete({ ref, argument: { name: argument, value: '' } });
      expect(completion.completion.values, JSON.stringify(ref)).toEqual(['web-1', 'web-2']);
    }
    expect(
      (await witness.complete({ ref: { type: 'ref/resource', uri: 'fleet://hosts/{host}' }, argument: { name: 'host', value: 'db' } })).completion.values,
    ).toEqual(['db-1']);
    const { prompts } = await limited.listPrompts();
    // Grants that show no service offer no service prompt.
    expect(prompts.map((p) => p.name).sort()).toEqual(['fleet_health_check', 'investigate_host']);
    const nothing = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, ['secret:none-such']));
    expect((await nothing.listPrompts()).prompts).toEqual([]);
    await nothing.close();
    const prompt = await limited.getPrompt({ name: 'investigate_host', arguments: { host: 'web-1' } });
    expect(prompt.messages[0]?.content).toMatchObject({ type: 'text', text: expect.stringContaining('host: "web-1"') });
    expect(await refusal(limited.getPrompt({ name: 'investigate_host', arguments: { host: 'db-1' } }), 'db-1')).toBe(
      await refusal(limited.getPrompt({ name: 'investigate_host', arguments: { host: 'zz-9' } }), 'zz-9'),
    );
  });

  it('notifications speak only of what it may see', async () => {
    const heard = (client: Client) => {
      const events: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        events.push(n.params.uri);
      });
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        events.push('list_changed');
      });
      return events;
    };
    const limitedHeard = heard(limited);
    const witnessHeard = heard(witness);
    for (const uri of ['fleet://status', 'fleet://agents', 'fleet://hosts/web-2']) await limited.subscribeResource({ uri });
    await witness.subscribeResource({ uri: 'fleet://status' });

    // A hidden host goes offline, and a hidden host joins: the witness hears of both, the limited identity of neither.
    await fleet.stopAgent(db);
    await waitFor(() => witnessHeard.includes('fleet://status'), { what: 'the witness told of db-1 going offline' });
    await fleet.addAgent('db-2');
    await waitFor(() => witnessHeard.includes('list_changed'), { what: 'the witness told of db-2 joining' });
    // A request answered after the witness heard: the limited session would have sent its notification by now.
    await readJson(limited, 'fleet://status');
    expect(limitedHeard).toEqual([]);

    // A visible host goes offline, and one joins: the limited identity hears of both.
    await fleet.stopAgent(web2);
    await waitFor(() => limitedHeard.includes('fleet://hosts/web-2') && limitedHeard.includes('fleet://status'), { what: 'told of web-2 going offline' });
    await fleet.addAgent('web-3');
    await waitFor(() => limitedHeard.includes('list_changed'), { what: 'told of web-3 joining' });
    expect((await readJson(limited, 'fleet://hosts/web-2')).state).toBe('offline');
  });
});
