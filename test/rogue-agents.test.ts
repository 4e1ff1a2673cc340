import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import { approveAgent, withdrawAgentRoles } from '../broker/admin/approve-agent.ts';
import { SwarmIndexer } from '../broker/domains/swarm/swarm-indexer.ts';
import { BrokerStore } from '../broker/store/broker-store.ts';
import { captureLogger } from './harness/capture-logger.ts';
import { testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient, readJson, text } from './harness/mcp-client.ts';
import { type RogueAgent, startRogueAgent } from './harness/rogue-agent.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

type Row = { name: string; type: string; id: string };
const SERVICES = ['rg-web', 'rg-db'];
const SECRETS = ['rg-secret'];
const SECRET_VALUE = 'rg-very-secret-value-4711';

/** One metric sample from /metrics, 0 when absent. */
async function metric(fleet: TestFleet, series: string): Promise<number> {
  const body = await (await fetch(new URL('/metrics', fleet.broker.mcpUrl))).text();
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** A snapshot of the real swarm with one service renamed: what a rogue would like the broker to believe. */
function forgedSnapshot(clusterId: string, takenUnixMs: number) {
  return {
    cluster_id: clusterId,
    cluster_name: 'rg-swarm',
    manager_node_id: 'forged',
    taken_unix_ms: takenUnixMs,
    services: [],
    tasks: [],
    nodes: [],
    networks: [],
    configs: [],
    secrets: [],
    volumes: [],
  };
}

describe('rogue agents speaking the raw protocol', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let admin: Client;
  let clusterId: string;
  let nodeId: string;
  let rogue: RogueAgent;
  let manager: Agent;
  const logs = captureLogger();

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES, secrets: SECRETS });
    await createService(docker, { name: 'rg-web', command: ['sh', '-c', 'while true; do echo "rg-web alive"; sleep 1; done'] });
    await createService(docker, { name: 'rg-db', command: ['sh', '-c', 'while true; do echo "rg-db alive"; sleep 1; done'] });
    clusterId = ((await docker.swarmInspect()) as { ID: string }).ID;
    nodeId = ((await docker.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
    fleet = await startTestFleet({ operationsLevel: 3, log: logs.log });
    // The rogue copies the real manager's facts and picks a name that sorts first.
    rogue = await startRogueAgent(fleet, 'aaa-rogue', {
      facts: { swarmRole: 'manager', swarmId: clusterId, swarmNodeId: nodeId, swarmName: 'rg-swarm' },
      collectors: ['swarm', 'docker'],
    });
    manager = await fleet.addAgent('zz-manager', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'swarm-name': 'rg-swarm' },
      snapshotIntervalMs: 1000,
      token: await fleet.token({ roles: ['swarm-manager'] }),
      log: logs.log,
    });
    admin = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    await waitFor(async () => ((await call(admin, 'find', { type: 'service', query: 'rg-web' })).structuredContent.rows as Row[]).length === 1, {
      timeoutMs: 60_000,
      what: 'rg-web indexed',
    });
  });
  afterAll(async () => {
    rogue?.close();
    await admin?.close();
    await fleet?.stop();
    await removeSwarmObjects(docker, { services: SERVICES, secrets: SECRETS });
  });

  it('shows a copied manager claim as pending, and serves the rogue as a plain host', async () => {
    const agents = (await call(admin, 'list_agents')).structuredContent.agents as { name: string; claims: { role: string; status: string }[] }[];
    expect(agents.find((a) => a.name === 'aaa-rogue')?.claims).toEqual([{ role: 'swarm-manager', object: clusterId, status: 'pending' }]);
    expect(agents.find((a) => a.name === 'zz-manager')?.claims).toEqual([{ role: 'swarm-manager', object: clusterId, status: 'approved' }]);
    const status = await call(admin, 'get_fleet_status');
    expect(status.structuredContent.pending_claims).toEqual([{ host: 'aaa-rogue', role: 'swarm-manager', object: clusterId }]);
    expect(text(status)).toContain('aaa-rogue');
  });

  it('sends a secret only to the approved manager, never to a rogue that claims the same node and sorts first', async () => {
    const created = await call(admin, 'create_secret', { name: 'rg-secret', data: SECRET_VALUE });
    expect(created.isError).toBeFalsy();
    expect((created.structuredContent.cluster as { manager: string }).manager).toBe('zz-manager');
    expect(rogue.calls().filter((c) => c.action === 'swarm.create_secret')).toEqual([]);
    expect(rogue.calls()).toEqual([]);
    const secrets = (await docker.listSecrets({ filters: { name: ['rg-secret'] } })) as unknown[];
    expect(secrets).toHaveLength(1);
    const status = await call(admin, 'get_cluster_status');
    expect((status.structuredContent.cluster as { manager: string }).manager).toBe('zz-manager');
    // Not in any log line, at any level, on the broker or the in-process agents.
    expect(JSON.stringify(logs.lines)).not.toContain(SECRET_VALUE);
  });

  it('ignores forged and future-dated snapshots from an agent that holds no manager role', async () => {
    const before = await metric(fleet, 'fleetmesh_reports_dropped_total{kind="swarm_snapshot",reason="not_role_holder"}');
    const forged = forgedSnapshot(clusterId, 9e15);
    forged.services = [];
    rogue.report('swarm_snapshot', forged, 9e15);
    await waitFor(async () => (await metric(fleet, 'fleetmesh_reports_dropped_total{kind="swarm_snapshot",reason="not_role_holder"}')) > before, {
      what: 'the forged snapshot counted as dropped',
    });
    const found = (await call(admin, 'find', { type: 'service', query: 'rg-web' })).structuredContent.rows as Row[];
    expect(found.map((r) => r.name)).toEqual(['rg-web']);
    const described = await call(admin, 'describe', { type: 'service', id: 'rg-web' });
    expect(described.isError).toBeFalsy();
  });

  it('drops a snapshot of a swarm the sender is not a manager of, even from an agent the operator made a manager', async () => {
    const other = await startRogueAgent(
      fleet,
      'other-manager',
      { facts: { swarmRole: 'manager', swarmId: 'rg-some-other-swarm', swarmNodeId: 'n1' }, collectors: ['swarm'] },
      await fleet.token(),
    );
    // As `fleetmesh agents approve` does: from another connection to the broker's store.
    const store = await BrokerStore.open(fleet.broker.options.dataDir, { create: false });
    try {
      await approveAgent(store, { agent: 'other-manager' });
    } finally {
      await store.close();
    }
    await waitFor(() => fleet.broker.registry.find('other-manager')?.roles.length === 1, { what: 'the approval picked up' });
    const before = await metric(fleet, 'fleetmesh_reports_dropped_total{kind="swarm_snapshot",reason="not_role_holder"}');
    other.report('swarm_snapshot', forgedSnapshot(clusterId, Date.now()));
    await waitFor(async () => (await metric(fleet, 'fleetmesh_reports_dropped_total{kind="swarm_snapshot",reason="not_role_holder"}')) > before, {
      what: 'the foreign snapshot dropped',
    });
    expect(((await call(admin, 'find', { type: 'service', query: 'rg-' })).structuredContent.rows as Row[]).length).toBeGreaterThan(0);
    other.close();
    const again = await BrokerStore.open(fleet.broker.options.dataDir, { create: false });
    try {
      expect((await withdrawAgentRoles(again, 'other-manager')).withdrawn).toBe(1);
    } finally {
      await again.close();
    }
    await waitFor(() => fleet.broker.registry.find('other-manager')?.roles.length === 0, { what: 'the withdrawal picked up' });
  });

  it('drops malformed reports of every kind, counts them, and every tool still works for everyone', async () => {
    const malformed: [string, unknown][] = [
      ['container_inventory', []],
      ['container_inventory', { taken_unix_ms: 1, containers: [{ id: 7 }], volumes: [] }],
      ['swarm_snapshot', { cluster_id: clusterId, taken_unix_ms: 9e15 }],
      ['swarm_snapshot', 'not an object'],
      ['proxmox_guests', { cluster: null, node: 'x', taken_unix_ms: 1, guests: [{ vmid: 'a' }] }],
    ];
    for (const [kind, payload] of malformed) rogue.report(kind, payload);
    await waitFor(
      async () =>
        (await metric(fleet, 'fleetmesh_reports_dropped_total{kind="container_inventory",reason="malformed"}')) >= 2 &&
        (await metric(fleet, 'fleetmesh_reports_dropped_total{kind="swarm_snapshot",reason="malformed"}')) >= 2 &&
        (await metric(fleet, 'fleetmesh_reports_dropped_total{kind="proxmox_guests",reason="malformed"}')) >= 1,
      { what: 'every malformed report counted' },
    );
    const limited = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, ['service:rg-web']));
    try {
      for (const client of [admin, limited]) {
        expect((await call(client, 'find', { query: 'rg-web' })).isError).toBeFalsy();
        expect((await call(client, 'describe', { type: 'service', id: 'rg-web' })).isError).toBeFalsy();
        expect((await call(client, 'get_logs', { service: 'rg-web', tail: 5 })).isError).toBeFalsy();
        expect(await readJson(client, 'fleet://recommendations')).toBeTruthy();
      }
    } finally {
      await limited.close();
    }
    const warnings = logs.lines.filter((l) => l.message === 'report dropped' && l.agent === 'aaa-rogue');
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.length).toBeLessThan(3);
  });

  describe('swarm reads under limited grants', () => {
    it('shows an identity limited to one host nothing of the swarm', async () => {
      const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, ['host:zz-manager']));
      try {
        for (const [tool, args] of [
          ['get_cluster_status', {}],
          ['get_topology', { view: 'network' }],
          ['get_events', {}],
          ['get_logs', { service: 'rg-web', tail: 5 }],
          ['watch', { service: 'rg-web', timeout: 1 }],
        ] as const) {
          const result = await call(client, tool, args);
          expect(result.isError, tool).toBe(true);
          expect((result.structuredContent.error as { code: string }).code, tool).toBe('not_found');
          expect(text(result), tool).not.toContain('rg-db');
        }
        expect((await call(client, 'describe', { type: 'service', id: 'rg-web' })).isError).toBe(true);
        const found = (await call(client, 'find', { query: 'rg-' })).structuredContent.rows as Row[];
        expect(found.filter((r) => r.type !== 'host' && r.type !== 'container' && r.type !== 'volume')).toEqual([]);
        const findings = (await call(client, 'get_recommendations')).structuredContent.findings as { target: { type: string } }[];
        expect(findings.filter((f) => f.target.type === 'service' || f.target.type === 'node')).toEqual([]);
        expect((await call(client, 'get_metrics', { target: 'service', id: 'rg-web' })).isError).toBe(true);
      } finally {
        await client.close();
      }
    });

    it('shows an identity limited to one service that service and nothing else', async () => {
      const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, ['service:rg-web']));
      try {
        const events = await call(client, 'get_events', { limit: 1000 });
        expect(events.isError).toBeFalsy();
        const names = (events.structuredContent.events as { type: string; name: string }[]).map((e) => `${e.type}:${e.name}`);
        expect(names.every((n) => n === 'service:rg-web' || n.startsWith('task:rg-web.'))).toBe(true);
        const logs = await call(client, 'get_logs', { cluster: clusterId, tail: 5 });
        expect((logs.structuredContent.lines as { service: string }[]).every((l) => l.service === 'rg-web')).toBe(true);
        expect((logs.structuredContent.services as string[]).every((s) => s === 'rg-web')).toBe(true);
        const hidden = await call(client, 'get_logs', { service: 'rg-db', tail: 5 });
        expect((hidden.structuredContent.error as { code: string }).code).toBe('not_found');
        const topology = await call(client, 'get_topology', { view: 'placement' });
        expect((topology.structuredContent.nodes as { name: string; type: string }[]).filter((n) => n.type === 'service').map((n) => n.name)).toEqual([
          'rg-web',
        ]);
        const status = await call(client, 'get_cluster_status');
        expect(status.isError).toBeFalsy();
        expect(JSON.stringify(status.structuredContent)).not.toMatch(/rg-db|tw-|ix-/);
        expect((await call(client, 'watch', { service: 'rg-db', timeout: 1 })).isError).toBe(true);
        const found = (await call(client, 'find', { query: 'rg-' })).structuredContent.rows as Row[];
        expect(found.length).toBeGreaterThan(0);
        expect(found.every((r) => (r.type === 'service' && r.name === 'rg-web') || (r.type === 'task' && r.name.startsWith('rg-web.')))).toBe(true);
        const findings = (await call(client, 'get_recommendations')).structuredContent.findings as { target: { name: string } }[];
        expect(findings.every((f) => f.target.name === 'rg-web')).toBe(true);
        expect((await call(client, 'get_metrics', { target: 'service', id: 'rg-db' })).isError).toBe(true);
        expect((await call(client, 'describe', { type: 'service', id: 'rg-db' })).isError).toBe(true);
      } finally {
        await client.close();
      }
    });

    it('shows an identity limited to one container that container, not the host it runs on', async () => {
      const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, ['container:zz-manager/rg-web*']));
      try {
        const processes = await call(client, 'processes', { host: 'zz-manager' });
        expect(processes.isError).toBe(true);
        expect(JSON.stringify(processes.structuredContent)).not.toContain('"pid"');
        // The agent is there, but not what describes its host: collectors and why they fail, the swarm it manages, its figures.
        const agents = (await call(client, 'list_agents')).structuredContent.agents as Record<string, unknown>[];
        expect(agents.map((a) => a.name)).toEqual(['zz-manager']);
        expect(agents[0]).toMatchObject({ sample: null, collectors: [], claims: [] });
        const status = (await call(client, 'get_fleet_status')).structuredContent;
        expect(status).toMatchObject({ unavailable_collectors: [], pending_claims: [], insecure: [], hot_hosts: [] });
        const scan = await call(client, 'inventory_scan', { host: 'zz-manager' });
        expect(scan.structuredContent).not.toHaveProperty('swarm');
        expect(JSON.stringify(scan.structuredContent)).not.toContain(nodeId);
        const containers = scan.structuredContent.containers as { name: string }[];
        expect(containers.length).toBeGreaterThan(0);
        expect(containers.every((c) => c.name.startsWith('rg-web'))).toBe(true);
        expect(scan.structuredContent.container_count).toBe(containers.length);
      } finally {
        await client.close();
      }
    });
  });

  // Last: it stops the real manager.
  it('reports a change the manager did not acknowledge as failed, naming that manager', async () => {
    const store = await BrokerStore.open(fleet.broker.options.dataDir, { create: false });
    try {
      await approveAgent(store, { agent: 'aaa-rogue' });
    } finally {
      await store.close();
    }
    await waitFor(() => fleet.broker.registry.find('aaa-rogue')?.roles.length === 1, { what: 'the approval picked up' });
    await fleet.stopAgent(manager);
    await waitFor(() => fleet.broker.registry.find('zz-manager')?.state === 'offline', { what: 'the real manager offline' });
    const pending = call(admin, 'scale_service', { id: 'rg-web', replicas: 2 });
    await waitFor(() => rogue.calls().find((c) => c.action === 'swarm.scale_service'), { what: 'the change sent to the only manager left' });
    rogue.close();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toMatchObject({ code: 'agent_disconnected', agent: 'aaa-rogue' });
    expect(text(result)).toContain('aaa-rogue');
  });
});

/** A manager node of a swarm, as a manager's snapshot lists it. */
function managerNode(id: string) {
  return {
    id,
    hostname: `host-${id}`,
    role: 'manager',
    availability: 'active',
    state: 'ready',
    addr: '10.9.0.1',
    leader: false,
    reachability: 'reachable',
    labels: {},
    engine_labels: {},
    cpu_cores: 2,
    memory_bytes: 2 ** 31,
    engine_version: '27.5.1',
    os: 'linux',
    arch: 'x86_64',
    version: 1,
    updated_unix_ms: 0,
  };
}

/** Answers every create_secret it is sent as a manager would. */
function answerSecrets(rogue: RogueAgent): void {
  rogue.raw.stream.on('data', (frame) => {
    if (frame.frame.case !== 'call' || frame.frame.value.action !== 'swarm.create_secret') return;
    rogue.answer(frame.frame.value.callId, { id: `secret-${frame.frame.value.callId.slice(0, 8)}`, name: 'rg-lonely', size_bytes: SECRET_VALUE.length });
  });
}

describe('a manager no agent runs on', () => {
  const SWARM = 'rglonelyswarm0000000000000';
  let fleet: TestFleet;
  let admin: Client;
  let trusted: RogueAgent;
  let claimant: RogueAgent;

  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 3 });
    // The operator's manager of a swarm of two managers: it runs on node-trusted; nothing of ours runs on node-lonely.
    trusted = await startRogueAgent(
      fleet,
      'rg-trusted-mgr',
      { facts: { swarmRole: 'manager', swarmId: SWARM, swarmNodeId: 'node-trusted', swarmName: 'rg-lonely' }, collectors: ['swarm'] },
      await fleet.token({ roles: ['swarm-manager'] }),
    );
    answerSecrets(trusted);
    trusted.report('swarm_snapshot', {
      ...forgedSnapshot(SWARM, Date.now()),
      cluster_name: 'rg-lonely',
      manager_node_id: 'node-trusted',
      nodes: [managerNode('node-trusted'), managerNode('node-lonely')],
    });
    await waitFor(() => fleet.broker.index.indexer(SwarmIndexer).swarm(SWARM), { what: 'the trusted manager’s snapshot indexed' });
    // An agent enrolled with a plain token names the lonely manager's node id, which any worker's `docker info` shows.
    claimant = await startRogueAgent(fleet, 'rg-claimant', {
      facts: { swarmRole: 'manager', swarmId: SWARM, swarmNodeId: 'node-lonely', swarmName: 'rg-lonely' },
      collectors: ['swarm'],
    });
    answerSecrets(claimant);
    admin = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
  });
  afterAll(async () => {
    trusted?.close();
    claimant?.close();
    await admin?.close();
    await fleet?.stop();
  });

  it('keeps a plain-token agent that names its node id pending, and sends it no secret', async () => {
    const agents = (await call(admin, 'list_agents')).structuredContent.agents as { name: string; claims: { status: string }[] }[];
    expect(agents.find((a) => a.name === 'rg-claimant')?.claims).toEqual([{ role: 'swarm-manager', object: SWARM, status: 'pending' }]);
    expect((await call(admin, 'get_fleet_status')).structuredContent.pending_claims).toEqual([{ host: 'rg-claimant', role: 'swarm-manager', object: SWARM }]);
    for (let i = 0; i < 4; i += 1) {
      const created = await call(admin, 'create_secret', { cluster: SWARM, name: `rg-lonely-${i}`, data: SECRET_VALUE });
      expect(created.isError, text(created)).toBeFalsy();
      expect((created.structuredContent.cluster as { manager: string }).manager).toBe('rg-trusted-mgr');
    }
    // With the operator's manager gone, the claimant is still no manager: the secret goes nowhere.
    trusted.close();
    await waitFor(() => fleet.broker.registry.find('rg-trusted-mgr')?.state === 'offline', { what: 'the trusted manager offline' });
    const orphan = await call(admin, 'create_secret', { cluster: SWARM, name: 'rg-lonely-last', data: SECRET_VALUE });
    expect(orphan.isError).toBe(true);
    expect(claimant.calls()).toEqual([]);
    expect(trusted.calls().filter((c) => c.action === 'swarm.create_secret')).toHaveLength(4);
  });
});
