import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import type { Host } from '../broker/agents/agent-registry.ts';
import type { CallAuthority } from '../broker/agents/agent-session.ts';
import { createIdentity } from '../broker/auth/identities.ts';
import type { Broker } from '../broker/broker.ts';
import { DockerIndexer } from '../broker/domains/docker/docker-indexer.ts';
import { BrokerStore } from '../broker/store/broker-store.ts';
import { FLEETMESH_BIN } from './harness/cli-process.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { startTestCluster, type TestCluster } from './harness/test-cluster.ts';
import { waitFor } from './harness/wait.ts';

function host(broker: Broker, name: string): Host {
  const found = broker.registry.find(name);
  if (!found) throw new Error(`no host ${name}`);
  return found;
}

/** Who holds the agent's stream, as this broker sees it: itself (`here`) or another broker's id. */
function holder(broker: Broker, name: string): string | undefined {
  const session = broker.registry.find(name)?.session;
  return session && (session.heldBy ?? 'here');
}

interface FleetNode {
  host: string;
  availability: string;
  errors: { code: string; message: string }[];
}

describe('three brokers on one bus serve one fleet', () => {
  let cluster: TestCluster;
  let client: Client;
  let tester: CallAuthority;
  const agents = new Map<string, Agent>();

  beforeAll(async () => {
    cluster = await startTestCluster();
    for (const [name, first] of [
      ['on-a', 'a'],
      ['on-b-1', 'b'],
      ['on-b-2', 'b'],
      ['on-c', 'c'],
    ] as const) {
      agents.set(name, await cluster.addAgent(name, first));
    }
    client = await mcpClient(cluster.a, await identityToken(cluster.a, 3));
    // Calls the tests send straight through a's fan-out, as identity `test`: the brokers holding the agents authorise them for it.
    const identity = await createIdentity(cluster.a.store, { name: 'test', level: 0 });
    tester = { identityId: identity.id, actionId: 'agent.info', confirmed: false };
  });

  afterAll(async () => {
    await client?.close();
    await cluster?.stop();
  });

  it('lists every agent online on every broker, whichever holds it', async () => {
    expect(holder(cluster.a, 'on-a')).toBe('here');
    expect(holder(cluster.a, 'on-b-1')).toBe('b');
    expect(holder(cluster.a, 'on-c')).toBe('c');
    expect(holder(cluster.c, 'on-a')).toBe('a');
    const onA = await call(client, 'list_agents');
    const clientC = await mcpClient(cluster.c, await identityToken(cluster.c, 1));
    const onC = await call(clientC, 'list_agents');
    await clientC.close();
    const summary = (result: typeof onA) =>
      (result.structuredContent.agents as { name: string; state: string }[]).map((agent) => `${agent.name}:${agent.state}`).sort();
    expect(summary(onA)).toEqual(['on-a:online', 'on-b-1:online', 'on-b-2:online', 'on-c:online']);
    expect(summary(onC)).toEqual(summary(onA));
    // Heartbeats stay with the broker holding the agent; their samples reach the others.
    await waitFor(() => cluster.c.registry.find('on-a')?.sample && cluster.a.registry.find('on-c')?.sample, { what: 'samples of agents held elsewhere' });
  });

  it("notifies a client subscribed on one broker of an agent's state on another", async () => {
    const clientC = await mcpClient(cluster.c, await identityToken(cluster.c, 1));
    const updated: string[] = [];
    clientC.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updated.push(notification.params.uri);
    });
    await clientC.subscribeResource({ uri: 'fleet://agents' });
    await cluster.addAgent('late-on-a', 'a');
    await waitFor(() => updated.includes('fleet://agents'), { what: 'a notification on c' });
    expect(await readJson(clientC, 'fleet://agents/late-on-a')).toMatchObject({ name: 'late-on-a', state: 'online' });
    await clientC.close();
  });

  it("serves this broker's own figures on /metrics", async () => {
    const metrics = await (await fetch(new URL('/metrics', cluster.a.mcpUrl))).text();
    expect(metrics).toMatch(/^fleetmesh_cluster_brokers\{broker="a"\} 3$/m);
    expect(metrics).toMatch(/^fleetmesh_cluster_agents_held\{broker="a"\} \d+$/m);
    expect(metrics).toMatch(/^fleetmesh_cluster_bus_up\{broker="a"\} 1$/m);
  });

  it('answers a call for one agent held by another broker', async () => {
    const result = await call(client, 'agent_info', { host: 'on-b-1' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ host: 'on-b-1', availability: 'available', name: 'on-b-1' });
  });

  it('answers a fleet-wide call with every agent, held by any of the three brokers', async () => {
    const result = await call(client, 'agent_info', {});
    expect(result.structuredContent).toMatchObject({ targeted: 5, responded: 5 });
    expect((result.structuredContent.hosts as FleetNode[]).map((node) => node.host)).toEqual(['late-on-a', 'on-a', 'on-b-1', 'on-b-2', 'on-c']);
  });

  it("builds every broker's fleet index from reports sent to any of them", async () => {
    agents.get('on-b-1')?.connection.report('container_inventory', { taken_unix_ms: Date.now(), containers: [], volumes: [] });
    const id = host(cluster.a, 'on-b-1').id;
    await waitFor(() => cluster.a.index.indexer(DockerIndexer).inventory(id) && cluster.c.index.indexer(DockerIndexer).inventory(id), {
      what: 'the inventory in the indexes of a and c',
    });
  });

  it('streams chunks back from agents on other brokers, and carries the cancellation to them', async () => {
    const controller = new AbortController();
    const chunks = new Map<string, number>();
    const pending = cluster.a.fanOut([host(cluster.a, 'on-b-1'), host(cluster.a, 'on-b-2'), host(cluster.a, 'on-c')], {
      action: 'agent.info',
      params: { watch_ms: 30_000, interval_ms: 100 },
      timeoutMs: 40_000,
      caller: 'test',
      authority: tester,
      signal: controller.signal,
      onChunk: (chunkHost) => chunks.set(chunkHost.name, (chunks.get(chunkHost.name) ?? 0) + 1),
    });
    await waitFor(() => ['on-b-1', 'on-b-2', 'on-c'].every((name) => (chunks.get(name) ?? 0) >= 2), { what: 'chunks from the three agents' });
    controller.abort();
    const outcomes = await pending;
    expect(outcomes.map((o) => (o.outcome.ok ? 'ok' : o.outcome.error.code))).toEqual(['cancelled', 'cancelled', 'cancelled']);
    await waitFor(() => ['on-b-1', 'on-b-2', 'on-c'].every((name) => agents.get(name)?.dispatcher.inFlight === 0), { what: 'the agents to stop the work' });
  });

  it('settles calls past their deadline on other brokers with deadline_exceeded, and the agents stop', async () => {
    const outcomes = await cluster.a.fanOut([host(cluster.a, 'on-b-1'), host(cluster.a, 'on-c')], {
      action: 'agent.info',
      params: { watch_ms: 30_000, interval_ms: 100 },
      timeoutMs: 1000,
      caller: 'test',
      authority: tester,
    });
    expect(outcomes.map((o) => (o.outcome.ok ? 'ok' : o.outcome.error.code))).toEqual(['deadline_exceeded', 'deadline_exceeded']);
    await waitFor(() => ['on-b-1', 'on-c'].every((name) => agents.get(name)?.dispatcher.inFlight === 0), { what: 'the agents to stop the work' });
  });

  it('closes the stream of an agent revoked on another broker', async () => {
    const doomed = await cluster.addAgent('doomed', 'c');
    expect(holder(cluster.a, 'doomed')).toBe('c');
    const fatal = new Promise<Error>((resolve) => doomed.connection.once('fatal', resolve));
    await cluster.a.registry.revoke(host(cluster.a, 'doomed').id, 'test');
    expect((await fatal).message).toMatch(/revoked/);
    expect(cluster.c.registry.find('doomed')).toBeUndefined();
  });

  it('ends the sessions of an identity revoked on another broker', async () => {
    const token = await identityToken(cluster.a, 1, undefined, 'short-lived');
    const clientC = await mcpClient(cluster.c, token);
    await call(clientC, 'list_agents');
    const sessionsOnC = () => cluster.c.mcp.liveSessions().filter((session) => session.identity.name === 'short-lived').length;
    expect(sessionsOnC()).toBe(1);
    const identity = await cluster.a.store.identities.findLiveByName('short-lived');
    await cluster.a.store.identities.revoke(identity?.id ?? '', Date.now());
    await waitFor(() => sessionsOnC() === 0, { what: "c to end the revoked identity's session" });
    await expect(call(clientC, 'list_agents')).rejects.toThrow(/revoked/);
    await clientC.close();
  });

  it('takes back the agents of a broker it counted gone while that broker was only silent', async () => {
    const onB = ['on-b-1', 'on-b-2'];
    expect(onB.map((name) => holder(cluster.a, name))).toEqual(['b', 'b']);
    const pid = cluster.b.child.pid as number;
    // b's event loop held past three beats, as a busy machine can: a and c count it gone and let its agents go.
    process.kill(pid, 'SIGSTOP');
    try {
      await waitFor(() => onB.every((name) => host(cluster.a, name).state === 'offline' && host(cluster.c, name).state === 'offline'), {
        what: 'a and c to count b gone',
        timeoutMs: 20_000,
      });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // b kept its agents' streams: once it beats again, a and c ask it which agents it holds.
    await waitFor(() => [cluster.a, cluster.c].every((broker) => onB.every((name) => holder(broker, name) === 'b' && host(broker, name).state === 'online')), {
      what: "a and c to see b's agents online on b again",
    });
    const outcomes = await cluster.a.fanOut(
      onB.map((name) => host(cluster.a, name)),
      { action: 'agent.info', params: {}, timeoutMs: 10_000, caller: 'test', authority: tester },
    );
    expect(outcomes.map(({ outcome }) => outcome.ok)).toEqual([true, true]);
  });

  it('returns by its deadline naming the hosts of a broker killed mid fan-out, whose agents come back on the others, and loses no acknowledged change from the audit', async () => {
    // Changes made through b, to an agent b holds and to one a holds, until b dies under them.
    const clientB = new Client({ name: 'cluster-audit-test', version: '1' });
    await clientB.connect(
      new StreamableHTTPClientTransport(new URL(cluster.mcpUrl.b), {
        requestInit: { headers: { Authorization: `Bearer ${await identityToken(cluster.a, 3, undefined, 'changer')}` } },
      }),
    );
    const acknowledged: string[] = [];
    let changing = true;
    const changes = (async () => {
      for (let seq = 0; changing; seq++) {
        // A call in flight when b dies has no answer coming: it ends by its own timeout.
        const result = await call(clientB, 'set_agent_labels', { host: seq % 2 ? 'on-a' : 'on-b-1', labels: { seq: String(seq) } }, { timeout: 5000 }).catch(
          () => undefined,
        );
        if (!result) return;
        if (!result.isError) acknowledged.push(String(seq));
      }
    })();
    // A change b had begun (its row committed) and never completed when it died.
    const asB = await BrokerStore.open(join(cluster.a.options.dataDir, 'as-b'), { store: cluster.a.options.store, brokerId: 'b' });
    await asB.audit.begin({
      callId: 'begun-on-b',
      startedAt: Date.now(),
      identity: 'changer',
      tool: 'set_agent_labels',
      action: 'agent.set_labels',
      level: 2,
      targets: ['on-b-2'],
      arguments: {},
      outcome: 'pending',
      errorCode: null,
    });
    await asB.close();

    const chunks = new Set<string>();
    const pending = cluster.a.fanOut(
      ['on-a', 'on-b-1', 'on-b-2', 'on-c'].map((name) => host(cluster.a, name)),
      {
        action: 'agent.info',
        params: { watch_ms: 1500, interval_ms: 100 },
        timeoutMs: 15_000,
        caller: 'test',
        authority: tester,
        onChunk: (chunkHost) => chunks.add(chunkHost.name),
      },
    );
    await waitFor(() => chunks.has('on-b-1') && chunks.has('on-b-2') && acknowledged.length >= 2, {
      what: 'chunks from the agents on b, and changes through b',
    });
    cluster.b.signal('SIGKILL');
    const outcomes = await pending;
    changing = false;
    await changes;
    await clientB.close().catch(() => undefined);
    const byName = Object.fromEntries(outcomes.map((o) => [o.host.name, o.outcome]));
    expect(byName['on-a']?.ok).toBe(true);
    expect(byName['on-c']?.ok).toBe(true);
    for (const name of ['on-b-1', 'on-b-2']) {
      const outcome = byName[name];
      expect(outcome?.ok).toBe(false);
      if (outcome?.ok === false) expect(outcome.error.message).toMatch(/broker b\b/);
    }
    await waitFor(
      () => ['on-b-1', 'on-b-2'].every((name) => ['here', 'c'].includes(holder(cluster.a, name) ?? '') && host(cluster.a, name).state === 'online'),
      { what: "b's agents online again on a or c" },
    );
    const again = await call(client, 'agent_info', { hosts: ['on-b-1', 'on-b-2'] });
    expect(again.structuredContent).toMatchObject({ targeted: 2, responded: 2 });

    // Every change b acknowledged is in the audit, completed; what b left pending the others settled.
    const rows = async () => (await cluster.a.store.audit.recent({ limit: 1000, identity: 'changer' })).filter((row) => row.brokerId === 'b');
    await waitFor(async () => (await rows()).every((row) => row.outcome !== 'pending'), { what: "a or c to settle b's pending audit rows" });
    const audited = await rows();
    const okSeqs = audited.filter((row) => row.outcome === 'ok').map((row) => (row.arguments.labels as Record<string, string>).seq);
    expect(acknowledged.length).toBeGreaterThanOrEqual(2);
    for (const seq of acknowledged) expect(okSeqs).toContain(seq);
    expect(audited.find((row) => row.callId === 'begun-on-b')).toMatchObject({
      outcome: 'interrupted',
      note: expect.stringMatching(/broker b left the cluster/),
    });
  });

  it('answers for its own agents while the bus is down, refuses the others with unavailable, and recovers', async () => {
    await cluster.nats.stop();
    await waitFor(() => cluster.a.cluster?.problem() !== undefined, { what: 'a to notice the bus is gone' });
    // Which agents a holds by now: the brokers even out their agents after b left, so on-a may have been asked to move.
    const names = ['late-on-a', 'on-a', 'on-b-1', 'on-b-2', 'on-c'];
    const own = await waitFor(() => names.find((name) => holder(cluster.a, name) === 'here' && host(cluster.a, name).state === 'online'), {
      what: 'an agent a holds',
    });
    const other = await waitFor(() => names.find((name) => !['here', undefined].includes(holder(cluster.a, name))), { what: 'an agent another broker holds' });
    const outcomes = await cluster.a.fanOut([host(cluster.a, own), host(cluster.a, other)], {
      action: 'agent.info',
      params: {},
      timeoutMs: 5000,
      caller: 'test',
      authority: tester,
    });
    expect(outcomes.map((o) => (o.outcome.ok ? 'ok' : o.outcome.error.code))).toEqual(['ok', 'unavailable']);
    const ready = await fetch(new URL('/readyz', cluster.a.mcpUrl));
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.bus).not.toBe('ok');

    await cluster.nats.start();
    await waitFor(() => cluster.a.cluster?.problem() === undefined, { what: 'a back on the bus' });
    await waitFor(
      async () => {
        const [outcome] = await cluster.a.fanOut([host(cluster.a, 'on-c')], {
          action: 'agent.info',
          params: {},
          timeoutMs: 5000,
          caller: 'test',
          authority: tester,
        });
        return outcome?.outcome.ok;
      },
      { what: 'a call through c to succeed again' },
    );
    expect((await fetch(new URL('/readyz', cluster.a.mcpUrl))).status).toBe(200);
  });

  it('fleetmesh stdio given several brokers moves its session to the next when its broker stops', async () => {
    const client = new Client({ name: 'stdio-cluster-test', version: '1' });
    const token = await identityToken(cluster.a, 1);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [FLEETMESH_BIN, 'stdio', '--url', `${cluster.c.mcpUrl},${cluster.a.mcpUrl}`, '--token', token],
        stderr: 'pipe',
      }),
    );
    expect((await client.callTool({ name: 'agent_info', arguments: { host: 'on-a' } })).structuredContent).toMatchObject({ host: 'on-a' });
    await cluster.stopC();
    expect((await client.callTool({ name: 'agent_info', arguments: { host: 'on-a' } })).structuredContent).toMatchObject({ host: 'on-a' });
    await client.close();
  });
});
