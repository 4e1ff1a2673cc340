import { create } from '@bufbuild/protobuf';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AgentFrameSchema, CollectorStatusSchema, FactsSchema, HelloSchema } from '../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { openRawStream } from './harness/raw-stream.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

interface Row {
  id: string;
  name: string;
  type: string;
  host?: string;
  state?: string;
  desired?: number;
  running?: number;
}

const SERVICES = ['ix-api', 'ix-worker', 'ix-flaky', 'ix-solo'];

describe('the fleet index: find, describe, metrics and recommendations', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let admin: Client;

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES });
    await createService(docker, {
      name: 'ix-api',
      replicas: 2,
      command: ['sh', '-c', 'while true; do echo api; sleep 1; done'],
      labels: { 'com.docker.stack.namespace': 'ix-shop' },
    });
    await createService(docker, { name: 'ix-worker', command: ['sleep', '3600'], labels: { 'com.docker.stack.namespace': 'ix-shop' } });
    await createService(docker, { name: 'ix-flaky', command: ['sh', '-c', 'exit 2'], restart: { Condition: 'any', Delay: 100_000_000 } });
    await createService(docker, { name: 'ix-solo', command: ['sh', '-c', 'while true; do i=$((i+1)); done'] });
    fleet = await startTestFleet({ operationsLevel: 3 });
    const agent = {
      collectors: 'default' as const,
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'swarm-name': 'ix-swarm' },
      containerSampleIntervalMs: 1000,
      snapshotIntervalMs: 2000,
    };
    await fleet.addAgent('ix-host-a', { ...agent, token: await fleet.token({ roles: ['swarm-manager'] }) });
    await fleet.addAgent('ix-host-b', { ...agent, token: await fleet.token({ roles: ['swarm-manager'] }) });
    admin = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    await waitFor(
      async () => {
        const api = await call(admin, 'find', { type: 'service', query: 'ix-api' });
        return (api.structuredContent.rows as Row[])[0]?.running === 2;
      },
      { timeoutMs: 60_000, what: 'ix-api indexed and running' },
    );
  });
  afterAll(async () => {
    await admin?.close();
    await fleet?.stop();
    await removeSwarmObjects(docker, { services: SERVICES });
  });

  it('finds hosts, containers and services across the fleet, counting per type', async () => {
    const everything = await call(admin, 'find', { query: 'ix-' });
    const counts = everything.structuredContent.counts as Record<string, number>;
    expect(counts.host).toBe(2);
    expect(counts.service).toBe(4);
    expect(counts.stack).toBe(1);
    expect(counts.container).toBeGreaterThanOrEqual(2);
    // Both agents run on the same engine, so each sees the containers: one row per host, once each
    // agent's inventory (which inspects every container of a busy shared engine) has arrived.
    const hosts = await waitFor(
      async () => {
        const containers = await call(admin, 'find', { type: 'containers', query: 'ix-api' });
        const seen = [...new Set((containers.structuredContent.rows as Row[]).map((r) => r.host))].sort();
        return seen.length === 2 ? seen : undefined;
      },
      { timeoutMs: 60_000, what: 'ix-api containers indexed from both hosts' },
    );
    expect(hosts).toEqual(['ix-host-a', 'ix-host-b']);
    const stack = await call(admin, 'find', { type: 'service', stack: 'ix-shop' });
    expect((stack.structuredContent.rows as Row[]).map((r) => r.name)).toEqual(['ix-api', 'ix-worker']);
    const paged = await call(admin, 'find', { type: 'service', query: 'ix-', limit: 2, offset: 2, raw: true });
    expect(paged.structuredContent.total).toBe(4);
    expect((paged.structuredContent.rows as Row[]).map((r) => r.name)).toEqual(['ix-solo', 'ix-worker']);
    expect(paged.structuredContent.raw).toHaveLength(2);
  });

  it('describes a service with its tasks, hosts, failures and restarts; a crash loop shows in restarts', async () => {
    const api = await call(admin, 'describe', { type: 'service', id: 'ix-api' });
    expect(api.structuredContent).toMatchObject({ type: 'service', name: 'ix-api', state: 'running', details: { replicas: 2, running: 2, stack: 'ix-shop' } });
    const related = api.structuredContent.related as { type: string; name: string; host?: string }[];
    expect(
      related
        .filter((r) => r.type === 'task')
        .map((r) => r.name)
        .sort(),
    ).toEqual(['ix-api.1', 'ix-api.2']);
    expect(related.find((r) => r.type === 'task')?.host).toMatch(/^ix-host-/);
    expect(related.some((r) => r.type === 'stack' && r.name === 'ix-shop')).toBe(true);

    await waitFor(
      async () => {
        const flaky = await call(admin, 'describe', { type: 'service', id: 'ix-flaky' });
        return ((flaky.structuredContent.restarts as { last_hour: number }).last_hour ?? 0) >= 3;
      },
      { timeoutMs: 60_000, what: 'ix-flaky restarts counted' },
    );
    const flaky = await call(admin, 'describe', { type: 'service', id: 'ix-flaky' });
    const failures = flaky.structuredContent.recent_failures as { task: string; exit_code: number | null; state: string }[];
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.length).toBeLessThanOrEqual(5);
    expect(failures[0]).toMatchObject({ exit_code: 2 });
    expect(failures[0]?.task).toMatch(/^ix-flaky\.1$/);
  });

  it('describes containers, tasks, nodes and hosts, and refuses an ambiguous name with the matching ids', async () => {
    const task = await call(admin, 'describe', { type: 'task', id: 'ix-worker.1' });
    expect(task.structuredContent).toMatchObject({ type: 'task', name: 'ix-worker.1', state: 'running' });
    expect((task.structuredContent.related as { type: string }[]).map((r) => r.type)).toEqual(expect.arrayContaining(['service', 'node', 'container']));
    const container = await call(admin, 'find', { type: 'container', query: 'ix-worker' });
    const name = (container.structuredContent.rows as Row[])[0]?.name as string;
    const ambiguous = await call(admin, 'describe', { type: 'container', id: name });
    expect(ambiguous.structuredContent.error).toMatchObject({ code: 'ambiguous' });
    const one = await call(admin, 'describe', { type: 'container', id: `ix-host-a/${name}`, raw: true });
    expect(one.structuredContent).toMatchObject({ type: 'container', host: 'ix-host-a' });
    expect((one.structuredContent.related as { type: string; name: string }[]).some((r) => r.type === 'service' && r.name === 'ix-worker')).toBe(true);
    expect(one.structuredContent.raw).toMatchObject({ name });
    const host = await call(admin, 'describe', { type: 'host', id: 'ix-host-b' });
    expect(host.structuredContent).toMatchObject({ type: 'host', state: 'online' });
    const nodes = await call(admin, 'find', { type: 'node' });
    const node = (nodes.structuredContent.rows as Row[])[0] as Row;
    const nodeDigest = await call(admin, 'describe', { type: 'node', id: node.name });
    expect((nodeDigest.structuredContent.related as { type: string }[]).some((r) => r.type === 'service')).toBe(true);
    const missing = await call(admin, 'describe', { type: 'service', id: 'ix-apl' });
    expect(missing.structuredContent.error).toMatchObject({ code: 'not_found' });
    expect((missing.structuredContent.error as { closest: string[] }).closest[0]).toBe('ix-api');
  });

  it("narrows find and describe to what the identity's grants cover", async () => {
    const narrow = await mcpClient(fleet.broker, await identityToken(fleet.broker, 1, ['service:ix-api', 'host:ix-host-a']));
    const found = await call(narrow, 'find', { query: 'ix-' });
    const rows = found.structuredContent.rows as Row[];
    expect(rows.filter((r) => r.type === 'service').map((r) => r.name)).toEqual(['ix-api']);
    expect(rows.filter((r) => r.type === 'host').map((r) => r.name)).toEqual(['ix-host-a']);
    expect(rows.filter((r) => r.type === 'container').every((r) => r.host === 'ix-host-a')).toBe(true);
    const hidden = await call(narrow, 'describe', { type: 'service', id: 'ix-worker' });
    expect(hidden.structuredContent.error).toMatchObject({ code: 'not_found' });
    const tasks = await call(narrow, 'find', { type: 'task', query: 'ix-' });
    expect((tasks.structuredContent.rows as Row[]).every((r) => r.name.startsWith('ix-api.'))).toBe(true);
    await narrow.close();
  });

  it('keeps metrics history of hosts, containers and services, and ranks the busiest', async () => {
    const host = await waitFor(
      async () => {
        const result = await call(admin, 'get_metrics', { target: 'host', id: 'ix-host-a', metric: 'memory' });
        const series = (result.structuredContent.series as { latest: number | null }[])[0];
        return series?.latest ? result : undefined;
      },
      { timeoutMs: 30_000, what: 'host memory history' },
    );
    expect(host.structuredContent).toMatchObject({ unit: 'bytes', step_s: 60, range: '1h' });
    const service = await waitFor(
      async () => {
        const result = await call(admin, 'get_metrics', { target: 'service', id: 'ix-solo', metric: 'cpu' });
        return (result.structuredContent.series as { latest: number | null }[])[0]?.latest !== null ? result : undefined;
      },
      { timeoutMs: 30_000, what: 'ix-solo cpu history' },
    );
    // A busy loop's share of a CPU depends on what else the machine runs: it shows, and it ranks first.
    expect((service.structuredContent.series as { latest: number }[])[0]?.latest).toBeGreaterThan(0);
    const ranking = await waitFor(
      async () => {
        const result = await call(admin, 'get_metrics', { target: 'cluster', metric: 'cpu', top: 3 });
        const ranked = result.structuredContent.ranking as { name: string; value: number }[];
        return ranked?.[0]?.name === 'ix-solo' ? ranked : undefined;
      },
      { timeoutMs: 30_000, what: 'ix-solo ranked busiest' },
    );
    expect(ranking[0]?.value).toBeGreaterThan(ranking[1]?.value ?? 0);
    // One running container's history (ix-api's: ix-flaky's tasks come and go). Both agents here watch the same engine,
    // so its name and its id name it on two hosts once both have sampled it.
    const row = await waitFor(
      async () => {
        const rows = await fleet.broker.runner.metrics.rows('container', {}, 0);
        const hostsOf = (match: (row: (typeof rows)[number]) => boolean) => new Set(rows.filter(match).map((row) => row.host_id)).size;
        return rows.find((candidate) => {
          if (candidate.service !== 'ix-api') return false;
          const id = candidate.entity.slice(candidate.entity.indexOf('/') + 1);
          return hostsOf((row) => row.name === candidate.name) > 1 && hostsOf((row) => row.entity.endsWith(`/${id}`)) > 1;
        });
      },
      { what: 'a container sampled by both agents' },
    );
    const hostName = fleet.broker.registry.get(row.host_id)?.name;
    for (const id of [row.name, row.entity.slice(row.entity.indexOf('/') + 1)]) {
      const twice = await call(admin, 'get_metrics', { target: 'container', id, metric: 'memory' });
      expect(twice.structuredContent.error).toMatchObject({ code: 'ambiguous' });
      expect((twice.structuredContent.error as { hint: string }).hint).toContain(`${hostName}/${row.name}`);
    }
    const one = await call(admin, 'get_metrics', { target: 'container', id: `${hostName}/${row.name}`, metric: 'memory' });
    expect((one.structuredContent.series as { name: string; latest: number | null }[])[0]).toMatchObject({ name: `${hostName}/${row.name}` });
    expect((one.structuredContent.series as { latest: number | null }[])[0]?.latest).toBeGreaterThan(0);
    const unknown = await call(admin, 'get_metrics', { target: 'container', id: 'ix-no-such-container' });
    expect(unknown.structuredContent.error).toMatchObject({ code: 'not_found' });
    const network = await call(admin, 'get_metrics', { target: 'host', id: 'ix-host-b', metric: 'network', range: '6h' });
    expect(network.structuredContent).toMatchObject({ unit: 'bytes_per_second', step_s: 300 });
    // History stays readable after the host goes offline.
    const agent = fleet.broker.registry.find('ix-host-b');
    agent?.session?.close({ code: 14, details: 'test' });
    await waitFor(() => fleet.broker.registry.find('ix-host-b')?.state !== 'online');
    const after = await call(admin, 'get_metrics', { target: 'host', id: 'ix-host-b', metric: 'memory' });
    expect((after.structuredContent.series as { latest: number | null }[])[0]?.latest).not.toBeNull();
  });

  it('recommends fixes, each with its rationale and the tool that remedies it', async () => {
    const result = await call(admin, 'get_recommendations');
    const findings = result.structuredContent.findings as {
      severity: string;
      category: string;
      target: { name: string };
      fix?: { tool: string; section?: string };
    }[];
    const of = (name: string, category: string) => findings.find((f) => f.target.name === name && f.category === category);
    expect(of('ix-flaky', 'flaky-service')).toMatchObject({ severity: 'critical' });
    expect(of('ix-worker', 'single-replica')).toMatchObject({ fix: { tool: 'scale_service' } });
    expect(of('ix-api', 'no-healthcheck')).toMatchObject({ fix: { tool: 'update_service', section: 'healthcheck' } });
    expect(of('ix-api', 'no-limits')).toMatchObject({ fix: { tool: 'update_service', section: 'resources' } });
    expect(findings[0]?.severity).toBe('critical');
    const critical = await call(admin, 'get_recommendations', { severity: 'critical' });
    expect((critical.structuredContent.findings as { severity: string }[]).every((f) => f.severity === 'critical')).toBe(true);
    const resource = await readJson(admin, 'fleet://recommendations');
    expect(resource.totals).toEqual(result.structuredContent.totals);
  });

  it('asks which swarm when the fleet holds several, and routes by cluster name or by the resource named', async () => {
    // The operator enrolled it as a manager: its claim of another swarm is believed.
    const donor = await fleet.addAgent('ix-other', { collectors: [], token: await fleet.token({ roles: ['swarm-manager'] }) });
    await fleet.stopAgent(donor);
    const other = openRawStream(fleet.address, donor.connection.currentIdentity, { hello: false });
    other.stream.write(
      create(AgentFrameSchema, {
        frame: {
          case: 'hello',
          value: create(HelloSchema, {
            agentVersion: 'raw',
            protocolVersion: PROTOCOL_VERSION,
            actions: ['swarm.cluster_status'],
            collectors: [create(CollectorStatusSchema, { name: 'swarm', available: true })],
            facts: create(FactsSchema, { swarmRole: 'manager', swarmId: 'otherswarm0000000000000000', swarmName: 'other' }),
          }),
        },
      }),
    );
    await waitFor(() => fleet.broker.registry.find('ix-other')?.hello?.facts.swarm_id === 'otherswarm0000000000000000');
    const ambiguous = await call(admin, 'get_cluster_status');
    expect(ambiguous.structuredContent.error).toMatchObject({ code: 'ambiguous' });
    expect((ambiguous.structuredContent.error as { message: string; hint: string }).hint).toMatch(/ix-swarm.*other|other.*ix-swarm/);
    const named = await call(admin, 'get_cluster_status', { cluster: 'ix-swarm' });
    expect(named.structuredContent.cluster).toMatchObject({ name: 'ix-swarm' });
    const byResource = await call(admin, 'watch', { service: 'ix-api', timeout: 5 });
    expect(byResource.structuredContent.cluster).toMatchObject({ name: 'ix-swarm' });
    other.close();
  });
});
