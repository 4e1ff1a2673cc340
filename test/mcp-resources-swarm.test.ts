import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { mcpClientV2 } from './harness/mcp-client-v2.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const SERVICES = ['rs-api', 'rs-other'];
const SWARM = 'fleet://swarms/rs-swarm';

async function readText(client: Client, uri: string): Promise<{ mimeType: string | undefined; text: string }> {
  const content = (await client.readResource({ uri })).contents[0];
  if (!content || !('text' in content)) throw new Error(`${uri} has no text`);
  return { mimeType: content.mimeType, text: content.text };
}

async function everyUri(client: Client): Promise<string[]> {
  const uris: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    uris.push(...page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
  } while (cursor);
  return uris;
}

/** A swarm's services, tasks, stacks and nodes as fleet:// resources, their subscriptions, completion and prompts, under grants. */
describe('the swarm as resources', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let admin: Client;
  let limited: Client;

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES });
    await createService(docker, {
      name: 'rs-api',
      command: ['sh', '-c', 'while true; do echo api-line; sleep 1; done'],
      labels: { 'com.docker.stack.namespace': 'rs-shop' },
    });
    await createService(docker, { name: 'rs-other', command: ['sleep', '3600'] });
    fleet = await startTestFleet({ operationsLevel: 3 });
    await fleet.addAgent('rs-host', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'swarm-name': 'rs-swarm' },
      containerSampleIntervalMs: 1000,
      snapshotIntervalMs: 1000,
      token: await fleet.token({ roles: ['swarm-manager'] }),
    });
    admin = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    limited = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, ['service:rs-api']));
    await waitFor(
      async () => {
        const found = await call(admin, 'find', { type: 'service', query: 'rs-' });
        return (found.structuredContent.rows as { running?: number }[]).filter((r) => r.running === 1).length === 2;
      },
      { timeoutMs: 60_000, what: 'rs- services indexed and running' },
    );
  });
  afterAll(async () => {
    await admin?.close();
    await limited?.close();
    await fleet?.stop();
    await removeSwarmObjects(docker, { services: SERVICES });
  });

  it('lists every swarm resource, and reads the digest describe gives, its logs, Compose, stack, history and cluster', async () => {
    const uris = await everyUri(admin);
    expect(uris).toEqual(
      expect.arrayContaining([
        SWARM,
        `${SWARM}/history`,
        `${SWARM}/services/rs-api`,
        `${SWARM}/services/rs-api/logs`,
        `${SWARM}/services/rs-api/compose`,
        `${SWARM}/stacks/rs-shop`,
        `${SWARM}/stacks/rs-shop/compose`,
        'fleet://hosts/rs-host',
      ]),
    );
    expect(uris.some((uri) => uri.startsWith(`${SWARM}/tasks/`))).toBe(true);
    expect(uris.some((uri) => uri.startsWith(`${SWARM}/nodes/`))).toBe(true);
    const container = uris.find((uri) => uri.startsWith('fleet://hosts/rs-host/containers/rs-api.1.')) as string;
    expect(await readJson(admin, container)).toMatchObject({ type: 'container', state: 'running' });
    const task = uris.find((uri) => uri.startsWith(`${SWARM}/tasks/`)) as string;
    expect(await readJson(admin, task)).toMatchObject({ type: 'task' });

    const described = await call(admin, 'describe', { type: 'service', id: 'rs-api' });
    const digest = await readJson(admin, `${SWARM}/services/rs-api`);
    expect(digest).toMatchObject({ type: 'service', name: 'rs-api', id: described.structuredContent.id, details: { stack: 'rs-shop' } });

    await waitFor(async () => JSON.stringify(await readJson(admin, `${SWARM}/services/rs-api/logs`)).includes('api-line'), {
      what: 'logs through the resource',
    });

    const compose = await readText(admin, `${SWARM}/services/rs-api/compose`);
    expect(compose.mimeType).toBe('application/yaml');
    expect(parse(compose.text).services['rs-api']).toMatchObject({ image: inject('testImage'), deploy: { mode: 'replicated', replicas: 1 } });
    expect(Object.keys(parse((await readText(admin, `${SWARM}/stacks/rs-shop/compose`)).text).services)).toEqual(['rs-api']);
    expect(await readJson(admin, `${SWARM}/stacks/rs-shop`)).toMatchObject({ type: 'stack', name: 'rs-shop' });
    expect(await readJson(admin, `${SWARM}/history`)).toHaveProperty('events');
    expect(await readJson(admin, SWARM)).toHaveProperty('nodes');
  });

  it('tells a subscriber when the service changes, and when the swarm it reads through an agent changes', async () => {
    const updated: string[] = [];
    admin.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await admin.subscribeResource({ uri: `${SWARM}/services/rs-other` });
    await admin.subscribeResource({ uri: `${SWARM}/history` });
    // 2026-07-28 listeners name the URIs themselves: the one whose identity may not see rs-other hears nothing of it.
    const modern = await mcpClientV2(fleet.broker, await identityToken(fleet.broker, 3));
    const modernLimited = await mcpClientV2(fleet.broker, await identityToken(fleet.broker, 0, ['service:rs-api']));
    const modernUpdated: string[] = [];
    const limitedUpdated: string[] = [];
    modern.setNotificationHandler('notifications/resources/updated', (n) => {
      modernUpdated.push(n.params.uri);
    });
    modernLimited.setNotificationHandler('notifications/resources/updated', (n) => {
      limitedUpdated.push(n.params.uri);
    });
    try {
      await modern.listen({ resourceSubscriptions: [`${SWARM}/services/rs-other`] });
      await modernLimited.listen({ resourceSubscriptions: [`${SWARM}/services/rs-other`] });
      const described = await call(admin, 'describe', { type: 'service', id: 'rs-other' });
      const scaled = await call(admin, 'scale_service', {
        id: 'rs-other',
        replicas: 2,
        version: (described.structuredContent.details as { version: number }).version,
      });
      expect(scaled.isError).toBeFalsy();
      await waitFor(() => updated.includes(`${SWARM}/services/rs-other`) && updated.includes(`${SWARM}/history`), {
        timeoutMs: 30_000,
        what: 'rs-other and the history updated',
      });
      await waitFor(() => modernUpdated.includes(`${SWARM}/services/rs-other`), { timeoutMs: 30_000, what: 'the 2026-07-28 listener told of rs-other' });
      expect(limitedUpdated).toEqual([]);
    } finally {
      await modern.close();
      await modernLimited.close();
    }
    await admin.unsubscribeResource({ uri: `${SWARM}/services/rs-other` });
    await admin.unsubscribeResource({ uri: `${SWARM}/history` });
  });

  it('links find and describe answers to the resources', async () => {
    const described = await call(admin, 'describe', { type: 'service', id: 'rs-api' });
    const links = described.content.filter((c) => c.type === 'resource_link').map((c) => (c as { uri: string }).uri);
    expect(links).toEqual([`${SWARM}/services/rs-api`, `${SWARM}/services/rs-api/logs`, `${SWARM}/services/rs-api/compose`]);
    const found = await call(admin, 'find', { type: 'stack' });
    expect(found.content).toContainEqual(expect.objectContaining({ type: 'resource_link', uri: `${SWARM}/stacks/rs-shop` }));
  });

  it('shows a service-limited identity its service alone, by every route', async () => {
    const uris = await everyUri(limited);
    expect(uris).toContain(`${SWARM}/services/rs-api`);
    expect(uris.join(' ')).not.toContain('rs-other');
    expect(uris.join(' ')).not.toContain('rs-host');
    await expect(limited.readResource({ uri: `${SWARM}/services/rs-other` })).rejects.toThrow(/Resource not found/);
    await expect(limited.readResource({ uri: `${SWARM}/services/rs-other/compose` })).rejects.toThrow(/Resource not found/);
    const ref = { type: 'ref/resource', uri: 'fleet://swarms/{cluster}/services/{name}' } as const;
    expect((await admin.complete({ ref, argument: { name: 'name', value: 'rs' } })).completion.values).toEqual(['rs-api', 'rs-other']);
    expect((await limited.complete({ ref, argument: { name: 'name', value: 'rs' } })).completion.values).toEqual(['rs-api']);
    expect((await limited.complete({ ref, argument: { name: 'cluster', value: '' } })).completion.values).toEqual(['rs-swarm']);
    const prompt = { type: 'ref/prompt', name: 'diagnose_service' } as const;
    expect((await limited.complete({ ref: prompt, argument: { name: 'service', value: '' } })).completion.values).toEqual(['rs-api']);
    await expect(limited.getPrompt({ name: 'diagnose_service', arguments: { service: 'rs-other' } })).rejects.toThrow(/no service "rs-other"/);
    const digest = await readJson(limited, `${SWARM}/services/rs-api`);
    // Its tasks show, but not which agent runs them: the identity may not see the host.
    expect(JSON.stringify(digest)).not.toContain('rs-host');
  });

  it('offers drain_node with the drain impact from the topology', async () => {
    const node = ((await call(admin, 'find', { type: 'node' })).structuredContent.rows as { name: string }[])[0]?.name as string;
    const { prompts } = await admin.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['drain_node', 'right_size_service', 'what_changed']));
    const drain = await admin.getPrompt({ name: 'drain_node', arguments: { node } });
    const text = (drain.messages[0]?.content as { text?: string } | undefined)?.text ?? '';
    expect(text).toContain(`node: ${JSON.stringify(node)}`);
    expect(text).toMatch(/drain impact now \(get_topology view drain-impact\): \{/);
    expect(text).toContain('rs-api');
  });
});
