import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentSetLabels } from '../../shared/domains/agent/agent-actions.ts';
import { dockerList } from '../../shared/domains/docker/docker-actions.ts';
import { alerts, processes, systemStatus } from '../../shared/domains/system/system-actions.ts';
import { captureLogger } from '../../test/harness/capture-logger.ts';
import {
  agentInfoOf,
  type LinkedAction,
  type LinkedFleet,
  type LinkedHost,
  type LinkedSessionOptions,
  startLinkedFleet,
} from '../../test/harness/linked-fleet.ts';
import { memoryClient, memoryClientV2 } from '../../test/harness/memory-client.ts';
import { waitFor } from '../../test/harness/wait.ts';
import type { Identity } from '../auth/identities.ts';

/** A tool result as a test reads it. */
interface Result {
  content: { type: string; text?: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A real SDK client on an in-memory session, whichever SDK and era: what a
 * test does with it, the few calls whose shape differs between the 1.x and
 * 2.x clients (callTool's options, notification handlers, subscribing) spelt
 * out once.
 */
interface SessionClient {
  listTools(): Promise<string[]>;
  call(
    name: string,
    args?: Record<string, unknown>,
    options?: { signal?: AbortSignal; onprogress?: (progress: Progress) => void; timeout?: number; resetTimeoutOnProgress?: boolean },
  ): Promise<Result>;
  /** A fleet:// resource, parsed. */
  read(uri: string): Promise<Record<string, unknown>>;
  listResources(): Promise<string[]>;
  listPrompts(): Promise<string[]>;
  getPrompt(name: string, args: Record<string, string>): Promise<{ messages: { content: unknown }[] }>;
  complete(prompt: string, argument: string, value: string): Promise<string[]>;
  /** Hears of changes to these resources: resources/subscribe in a 2025 session, subscriptions/listen in 2026-07-28. */
  watch(uris: string[], updated: string[]): Promise<void>;
  close(): Promise<void>;
}

type ClientKind = 'SDK 1.x, 2025 session' | 'client 2.x, 2025 session' | 'client 2.x, 2026-07-28';

async function connect(kind: ClientKind, fleet: LinkedFleet, identity: Identity, options: LinkedSessionOptions = {}): Promise<SessionClient> {
  if (kind === 'SDK 1.x, 2025 session') {
    const { client, close } = await memoryClient(fleet.mcpSession(identity, { ...options, era: 'legacy' }));
    return {
      listTools: async () => (await client.listTools()).tools.map((t) => t.name),
      call: async (name, args = {}, callOptions = {}) => (await client.callTool({ name, arguments: args }, undefined, callOptions)) as Result,
      read: async (uri) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text),
      listResources: async () => (await client.listResources()).resources.map((r) => r.uri),
      listPrompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
      getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
      complete: async (prompt, argument, value) =>
        (await client.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name: argument, value } })).completion.values,
      watch: async (uris, updated) => {
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
          updated.push(n.params.uri);
        });
        for (const uri of uris) await client.subscribeResource({ uri });
      },
      close,
    };
  }
  const era = kind === 'client 2.x, 2025 session' ? 'legacy' : 'modern';
  const { client, close } = await memoryClientV2(fleet.mcpSession(identity, { ...options, era }), { era });
  const listening: { close(): Promise<void> }[] = [];
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args = {}, callOptions = {}) => (await client.callTool({ name, arguments: args }, callOptions)) as Result,
    read: async (uri) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text),
    listResources: async () => (await client.listResources()).resources.map((r) => r.uri),
    listPrompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
    getPrompt: (name, args) => client.getPrompt({ name, arguments: args }),
    complete: async (prompt, argument, value) =>
      (await client.complete({ ref: { type: 'ref/prompt', name: prompt }, argument: { name: argument, value } })).completion.values,
    watch: async (uris, updated) => {
      client.setNotificationHandler('notifications/resources/updated', (n) => {
        updated.push(n.params.uri);
      });
      if (era === 'legacy') for (const uri of uris) await client.subscribeResource({ uri });
      else listening.push(await client.listen({ resourceSubscriptions: uris }));
    },
    close: async () => {
      for (const subscription of listening) await subscription.close();
      await close();
    },
  };
}

function text(result: Result): string {
  return result.content.map((c) => (c.type === 'text' ? (c.text ?? '') : '')).join('\n');
}

interface Node {
  host: string;
  availability: string;
}

const KINDS: ClientKind[] = ['SDK 1.x, 2025 session', 'client 2.x, 2025 session', 'client 2.x, 2026-07-28'];

describe.each(KINDS)('an MCP session in memory, to a real %s client', (kind) => {
  let fleet: LinkedFleet;
  let client: SessionClient | undefined;
  const hosts: Record<string, LinkedHost> = {};
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    for (const [name, labels] of [
      ['web-1', { role: 'web', env: 'prod' }],
      ['web-2', { role: 'web', env: 'dev' }],
      ['db-1', { role: 'db', env: 'prod' }],
    ] as const) {
      hosts[name] = await fleet.addHost(name, [agentInfoOf(name, labels)], labels);
    }
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    await fleet.stop();
  });

  it('lists the tools within the identity level', async () => {
    client = await connect(kind, fleet, fleet.identity(0));
    const tools = await client.listTools();
    expect(tools).toContain('agent_info');
    expect(tools).toContain('get_fleet_status');
    expect(tools).not.toContain('docker_restart');
  });

  it('answers one host with its node, and targets by hosts, selector or the server alias', async () => {
    client = await connect(kind, fleet, fleet.identity(0));
    const single = await client.call('agent_info', { host: 'web-1' });
    expect(single.structuredContent).toMatchObject({ host: 'web-1', availability: 'available', failed_collectors: [], errors: [], name: 'web-1' });
    const alias = await client.call('agent_info', { server: 'db-1' });
    expect(alias.structuredContent.host).toBe('db-1');
    const listed = await client.call('agent_info', { hosts: ['web-2', 'db-1'] });
    expect((listed.structuredContent.hosts as Node[]).map((n) => n.host)).toEqual(['db-1', 'web-2']);
    const selected = await client.call('agent_info', { selector: 'role=web,env!=dev' });
    expect((selected.structuredContent.hosts as Node[]).map((n) => n.host)).toEqual(['web-1']);
    const both = await client.call('agent_info', { host: 'web-1', selector: 'role=web' });
    expect(both.structuredContent.error).toMatchObject({ code: 'invalid_argument' });
  });

  it('suggests the closest names for an unknown host, as an error result', async () => {
    client = await connect(kind, fleet, fleet.identity(0));
    const result = await client.call('agent_info', { host: 'wbe-1' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toMatchObject({ code: 'not_found', closest: expect.arrayContaining(['web-1']) });
    expect(text(result)).toMatch(/Closest agents: web-1/);
  });

  it('checks timeout_ms and parameters before anything is sent', async () => {
    client = await connect(kind, fleet, fleet.identity(0));
    const tooLong = await client.call('agent_info', { timeout_ms: 70_000 });
    expect(tooLong.structuredContent.error).toMatchObject({ code: 'invalid_argument' });
    const unknownParam = await client.call('agent_info', { lines: 5 });
    expect(unknownParam.structuredContent.error).toMatchObject({
      code: 'invalid_argument',
      accepted: expect.arrayContaining(['watch_ms', 'interval_ms', 'host', 'hosts', 'selector', 'timeout_ms']),
    });
    const misspelt = await client.call('agent_inf', {});
    expect(misspelt.structuredContent.error).toMatchObject({ code: 'not_found', closest: expect.arrayContaining(['agent_info']) });
    expect(text(misspelt)).toMatch(/Did you mean agent_info/);
    // Nothing reached a host.
    expect(fleet.registry.list().every((host) => (host.session?.inFlight ?? 0) === 0)).toBe(true);
  });

  it('sends progress as hosts answer when the client asks for it', async () => {
    client = await connect(kind, fleet, fleet.identity(0));
    const progress: Progress[] = [];
    await client.call('agent_info', { selector: 'role=web' }, { onprogress: (p) => progress.push(p) });
    expect(progress[0]).toMatchObject({ progress: 0, total: 2, message: 'sent to 2 hosts' });
    expect(progress.slice(1).map((p) => p.progress)).toEqual([1, 2]);
    expect(progress.slice(1).map((p) => p.message?.replace(/^web-\d/, 'web-N'))).toEqual(['web-N: answered', 'web-N: answered']);
  });

  it('keeps a caller that resets its timeout on progress waiting for a change that runs past its timeout, saying the call still runs', async () => {
    let release = (): void => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await fleet.addHost('long-1', [
      agentInfoOf('long-1'),
      {
        action: agentSetLabels,
        handler: async () => {
          await released;
          return { payload: { labels: { stage: 'blue' } } };
        },
      },
    ]);
    // Word that it still runs every 40 ms, against a client that gives up after 150 ms without any.
    client = await connect(kind, fleet, fleet.identity(2), { stillRunningProgressMs: 40 });
    const progress: Progress[] = [];
    const answer = client.call(
      'set_agent_labels',
      { host: 'long-1', labels: { stage: 'blue' } },
      {
        timeout: 150,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          progress.push(p);
          // The change ends once the call has run well past the client's timeout.
          if (progress.filter((seen) => seen.message?.startsWith('still running')).length === 8) release();
        },
      },
    );
    const result = await answer;
    expect(result.isError).toBeFalsy();
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((x, y) => x - y));
    expect(new Set(values).size).toBe(values.length);
  });

  it('passes the client cancellation down to every agent still working', async () => {
    const logs = [captureLogger(), captureLogger()];
    const agents = [
      await fleet.addHost('slow-1', [agentInfoOf('slow-1')], { role: 'slow' }, { log: logs[0]?.log }),
      await fleet.addHost('slow-2', [agentInfoOf('slow-2')], { role: 'slow' }, { log: logs[1]?.log }),
    ];
    client = await connect(kind, fleet, fleet.identity(1));
    const controller = new AbortController();
    const pending = client.call('agent_info', { selector: 'role=slow', watch_ms: 30_000, timeout_ms: 40_000 }, { signal: controller.signal });
    await waitFor(() => agents.every((a) => a.dispatcher.inFlight === 1), { what: 'both agents working' });
    controller.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(() => agents.every((a) => a.dispatcher.inFlight === 0), { what: 'both agents stopping' });
    for (const capture of logs) expect(capture?.lines.some((line) => line.message === 'call cancelled')).toBe(true);
  });

  it('lists and reads resources, and tells a subscriber when an agent changes state', async () => {
    client = await connect(kind, fleet, fleet.identity(0));
    expect(await client.listResources()).toEqual(expect.arrayContaining(['fleet://agents', 'fleet://status', 'fleet://hosts/web-1']));
    expect(await client.read('fleet://agents/web-1')).toMatchObject({ name: 'web-1', state: 'online' });
    const updated: string[] = [];
    await client.watch(['fleet://agents/web-2', 'fleet://status'], updated);
    hosts['web-2']?.disconnect();
    await waitFor(() => updated.includes('fleet://agents/web-2') && updated.includes('fleet://status'), { what: 'resource updates' });
    expect(updated).not.toContain('fleet://agents');
    expect((await client.read('fleet://agents/web-2')).state).toBe('offline');
    expect((await client.read('fleet://status')).counts).toMatchObject({ offline: 1 });
    // A 2026-07-28 listener names URIs without asking: one that does not exist is never told of (test/mcp-eras.test.ts).
    if (kind !== 'client 2.x, 2026-07-28') await expect(client.watch(['fleet://agents/nobody'], [])).rejects.toThrow(/Resource not found/);
  });

  it('offers prompts within the identity level whose tools the fleet serves, and completes host names', async () => {
    // Hosts that serve agent_info only: the prompts walking system, Docker or swarm tools have nothing to walk.
    client = await connect(kind, fleet, fleet.identity(0));
    expect((await client.listPrompts()).sort()).toEqual(['fleet_health_check']);
    await client.close();
    const silent: LinkedAction['handler'] = async () => ({ payload: null });
    await fleet.addHost('db-2', [agentInfoOf('db-2'), ...[systemStatus, alerts, processes, dockerList].map((action) => ({ action, handler: silent }))]);
    client = await connect(kind, fleet, fleet.identity(0));
    expect((await client.listPrompts()).sort()).toEqual(['fleet_health_check', 'investigate_host']);
    const prompt = await client.getPrompt('investigate_host', { host: 'web-1' });
    expect(prompt.messages[0]?.content).toMatchObject({ type: 'text', text: expect.stringContaining('host: "web-1"') });
    expect(await client.complete('investigate_host', 'host', 'web')).toEqual(['web-1', 'web-2']);
    await expect(client.getPrompt('investigate_host', { host: 'nowhere' })).rejects.toThrow(/no host "nowhere"/);
  });

  it('renders a fleet answer as a Markdown table, or as JSON with --text-format json', async () => {
    client = await connect(kind, fleet, fleet.identity(0));
    const markdown = text(await client.call('list_agents'));
    expect(markdown).toMatch(/^\*\*List agents\*\*/);
    expect(markdown).toMatch(/\| name \| state \| version \| labels \| last_seen_unix_ms \|/);
    expect(markdown).toMatch(/\| `web-1` \| `online` \|/);
    expect(markdown).toMatch(/Fields not in the table: id, collectors/);
    await client.close();
    client = await connect(kind, fleet, fleet.identity(0), { textFormat: 'json' });
    const result = await client.call('list_agents');
    expect(JSON.parse(text(result))).toEqual(result.structuredContent);
  });
});
