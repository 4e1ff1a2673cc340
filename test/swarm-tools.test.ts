import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SwarmEngine } from '../agent/collectors/swarm/swarm-engine.ts';
import { removeLocalTask } from '../agent/collectors/swarm/swarm-mutations.ts';
import { SwarmReader } from '../agent/collectors/swarm/swarm-reader.ts';
import { createEngineClient } from '../agent/engine/engine-client.ts';
import { testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { createService, removeSwarmObjects } from './harness/swarm-services.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const SERVICES = ['tw-web', 'tw-stuck', 'tw-crash', 'tw-shop-api', 'tw-shop-db', 'tw-scratch'];
const SECRETS = ['tw-secret', 'tw-secret-2'];
const CONFIGS = ['tw-config'];
const NETWORKS = ['tw-net'];
const VOLUMES = ['tw-vol'];

describe('Swarm tools through manager agents', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let admin: Client;
  let operator: Client;

  beforeAll(async () => {
    docker = testDocker();
    await removeSwarmObjects(docker, { services: SERVICES, secrets: SECRETS, configs: CONFIGS, networks: NETWORKS, volumes: VOLUMES });
    const image = docker.getImage(inject('testImage'));
    await image.tag({ repo: 'fleetmesh-test/busybox', tag: '2' });
    await docker.createNetwork({ Name: 'tw-net', Driver: 'overlay', Attachable: true });
    await docker.createVolume({ Name: 'tw-vol' });
    await createService(docker, {
      name: 'tw-web',
      replicas: 2,
      command: ['sh', '-c', 'i=0; while true; do echo "level=info hello $i"; echo "level=error boom $i" >&2; i=$((i+1)); sleep 1; done'],
      networks: ['tw-net'],
      restart: { Condition: 'any' },
    });
    await createService(docker, { name: 'tw-stuck', command: ['sleep', '3600'], constraints: ['node.labels.tw-nowhere==yes'] });
    await createService(docker, { name: 'tw-crash', command: ['sh', '-c', 'echo crashing; exit 1'], restart: { Condition: 'any', Delay: 100_000_000 } });
    for (const name of ['tw-shop-api', 'tw-shop-db']) {
      await createService(docker, {
        name,
        command: ['sh', '-c', `while true; do echo "${name} alive"; sleep 1; done`],
        labels: { 'com.docker.stack.namespace': 'tw-shop' },
      });
    }
    fleet = await startTestFleet({ operationsLevel: 3 });
    const agent = { collectors: 'default' as const, dockerAddress: inject('dockerHost'), domainFlags: { 'swarm-name': 'test-swarm' } };
    await fleet.addAgent('tw-mgr-a', { ...agent, token: await fleet.token({ roles: ['swarm-manager'] }) });
    await fleet.addAgent('tw-mgr-b', { ...agent, token: await fleet.token({ roles: ['swarm-manager'] }) });
    admin = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    operator = await mcpClient(fleet.broker, await identityToken(fleet.broker, 2));
    await waitFor(async () => (await call(admin, 'watch', { service: 'tw-web', timeout: 30 })).structuredContent.converged === true, {
      timeoutMs: 60_000,
      what: 'tw-web converged',
    });
  });
  afterAll(async () => {
    await admin?.close();
    await operator?.close();
    await fleet?.stop();
    await removeSwarmObjects(docker, { services: SERVICES, secrets: SECRETS, configs: CONFIGS, networks: NETWORKS, volumes: VOLUMES });
    await docker
      .getImage('fleetmesh-test/busybox:2')
      .remove()
      .catch(() => undefined);
  });

  it('says why the cluster is not healthy: an unschedulable service and a crash loop', async () => {
    // Each answer comes from one manager's snapshot, and the two managers' may differ in age: every check reads the same answer.
    const status = await waitFor(
      async () => {
        const answer = await call(admin, 'get_cluster_status', { cluster: 'test-swarm' });
        const restarting = (answer.structuredContent.services as { restarting: { name: string }[] }).restarting;
        return restarting.some((s) => s.name === 'tw-crash') ? answer : undefined;
      },
      { timeoutMs: 60_000, what: 'tw-crash seen restarting in a loop' },
    );
    const services = status.structuredContent.services as { not_converged: { name: string; reason?: string; running: number; desired: number }[] };
    expect(status.structuredContent.health).not.toBe('healthy');
    const stuck = services.not_converged.find((s) => s.name === 'tw-stuck');
    expect(stuck).toMatchObject({ running: 0, desired: 1 });
    expect(stuck?.reason).toMatch(/no suitable node|constraint/i);
    expect((status.structuredContent.problems as string[]).some((p) => p.includes('tw-crash') && p.includes('restarted'))).toBe(true);
    expect(status.structuredContent.capacity).toMatchObject({ total_cpu_cores: expect.any(Number), total_memory_bytes: expect.any(Number) });
    expect(status.structuredContent.cluster).toMatchObject({ name: 'test-swarm', manager: expect.stringMatching(/^tw-mgr-/) });
  });

  it('projects topology: networks, placement, and what draining the node would strand, with the blocking constraint', async () => {
    const network = await call(admin, 'get_topology', { view: 'network' });
    expect(network.structuredContent.edges).toEqual(expect.arrayContaining([expect.objectContaining({ from: 'tw-web', to: 'tw-net' })]));
    const placement = await call(admin, 'get_topology', { view: 'placement' });
    expect((placement.structuredContent.edges as { to: string; detail: string }[]).find((e) => e.to === 'tw-web')?.detail).toBe('2 tasks');
    const node = (placement.structuredContent.nodes as { type: string; name: string }[]).find((n) => n.type === 'node')?.name as string;
    const drain = await call(admin, 'get_topology', { view: 'drain-impact', node });
    const stranded = drain.structuredContent.stranded as { service: string; detail: string }[];
    expect(stranded.find((s) => s.service === 'tw-web')?.detail).toMatch(/no other node/);
  });

  it('reads logs of a service, a task, a stack and the cluster, attributed and filtered', async () => {
    const service = await call(admin, 'get_logs', { service: 'tw-web', tail: 5 });
    const lines = service.structuredContent.lines as { service: string; task: string; node: string; stream: string; text: string; level?: string }[];
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.service === 'tw-web' && /^tw-web\.\d$/.test(l.task) && l.node !== '')).toBe(true);
    expect(lines.some((l) => l.stream === 'stderr' && l.level === 'error')).toBe(true);
    const errors = await call(admin, 'get_logs', { service: 'tw-web', level: 'error', contains: 'BOOM' });
    expect((errors.structuredContent.lines as { text: string }[]).every((l) => l.text.startsWith('level=error boom'))).toBe(true);
    const task = await call(admin, 'get_logs', { task: 'tw-web.1', tail: 3 });
    expect((task.structuredContent.lines as { task: string }[]).every((l) => l.task === 'tw-web.1')).toBe(true);
    const stack = await call(admin, 'get_logs', { stack: 'tw-shop', tail: 3 });
    expect([...new Set((stack.structuredContent.lines as { service: string }[]).map((l) => l.service))].sort()).toEqual(['tw-shop-api', 'tw-shop-db']);
    const wide = await call(admin, 'get_logs', { cluster: 'test-swarm', tail: 1, contains: 'alive' });
    expect(wide.structuredContent.services as string[]).toEqual(expect.arrayContaining(['tw-shop-api', 'tw-web']));
    const two = await call(admin, 'get_logs', { service: 'tw-web', stack: 'tw-shop' });
    expect(two.structuredContent.error).toMatchObject({ code: 'invalid_argument' });
    expect(text(service)).toMatch(/\| service \| task \| stream \| text \|/);
  });

  it('watches a service converge, and says why one does not', async () => {
    const converged = await call(admin, 'watch', { service: 'tw-web', timeout: 10 });
    expect(converged.structuredContent).toMatchObject({ converged: true, service: { name: 'tw-web', running: 2, replicas: 2, state: 'running' } });
    const stuck = await call(admin, 'watch', { service: 'tw-stuck', timeout: 2 });
    expect(stuck.structuredContent).toMatchObject({ converged: false, service: { running: 0, state: 'failing' } });
    expect(stuck.structuredContent.reason).toMatch(/no suitable node|constraint/i);
  });

  it('scales, updates the image, rolls back and restarts, answering where the service ended up', async () => {
    // wait: true blocks for up to 60 s on the agent, the SDK client's own default timeout: the client waits longer,
    // so an engine slow to converge shows as the answer's converged: false, not as the client giving up first.
    const PAST_THE_WAIT = { timeout: 90_000 };
    const scaled = await call(admin, 'scale_service', { id: 'tw-web', replicas: 3, wait: true }, PAST_THE_WAIT);
    expect(scaled.structuredContent).toMatchObject({ name: 'tw-web', replicas: 3, running: 3, converged: true });
    const updated = await call(admin, 'update_service_image', { id: 'tw-web', image: 'fleetmesh-test/busybox:2', wait: true }, PAST_THE_WAIT);
    expect(updated.structuredContent).toMatchObject({ image: 'fleetmesh-test/busybox:2', converged: true });
    const rolledBack = await call(admin, 'rollback_service', { id: 'tw-web', wait: true }, PAST_THE_WAIT);
    expect(rolledBack.structuredContent).toMatchObject({ image: inject('testImage'), converged: true });
    const before = rolledBack.structuredContent.version as number;
    const restarted = await call(admin, 'restart_service', { id: 'tw-web', wait: true }, PAST_THE_WAIT);
    expect(restarted.structuredContent.version as number).toBeGreaterThan(before);
    expect(restarted.structuredContent.converged).toBe(true);
    const back = await call(admin, 'scale_service', { id: 'tw-web', replicas: 2, wait: true }, PAST_THE_WAIT);
    expect(back.structuredContent).toMatchObject({ replicas: 2, running: 2 });
  }, 240_000);

  it('refuses a change made against a stale version as a conflict that says re-read and retry', async () => {
    const current = await call(admin, 'scale_service', { id: 'tw-scratch-nope', replicas: 1 });
    expect(current.structuredContent.error).toMatchObject({ code: 'not_found' });
    const first = await call(admin, 'scale_service', { id: 'tw-web', replicas: 2 });
    const stale = first.structuredContent.version as number;
    // Someone else changes the service in between.
    await call(admin, 'update_service', { id: 'tw-web', section: 'labels', value: { touched: 'yes' } });
    const conflict = await call(admin, 'scale_service', { id: 'tw-web', replicas: 2, version: stale });
    expect(conflict.isError).toBe(true);
    expect(conflict.structuredContent.error).toMatchObject({ code: 'conflict' });
    expect(text(conflict)).toMatch(/re-read/i);
  });

  it('edits one section at a time, merging env and labels and naming variables without values', async () => {
    const env = await call(operator, 'update_service', { id: 'tw-web', section: 'env', value: { API_TOKEN: 's3cr3t', MODE: 'prod' } });
    expect(env.structuredContent).toMatchObject({ section: 'env', details: { env_names: ['API_TOKEN', 'MODE'] } });
    expect(JSON.stringify(env.structuredContent)).not.toContain('s3cr3t');
    const removed = await call(operator, 'update_service', { id: 'tw-web', section: 'env', value: { API_TOKEN: null } });
    expect(removed.structuredContent.details).toEqual({ env_names: ['MODE'] });
    const resources = await call(operator, 'update_service', {
      id: 'tw-web',
      section: 'resources',
      value: { cpu_limit_cores: 0.5, memory_limit_bytes: 64 * 1024 * 1024, memory_reservation_bytes: 16 * 1024 * 1024 },
    });
    expect(resources.structuredContent.details).toMatchObject({ cpu_limit_cores: 0.5, memory_limit_bytes: 67_108_864, memory_reservation_bytes: 16_777_216 });
    const health = await call(operator, 'update_service', {
      id: 'tw-web',
      section: 'healthcheck',
      value: { test: ['CMD', 'true'], interval: '5s', retries: 2 },
    });
    expect(health.structuredContent.details).toMatchObject({ test: ['CMD', 'true'], interval: '5s', retries: 2 });
    const refused = await call(operator, 'update_service', { id: 'tw-web', section: 'secrets', value: [] });
    expect(refused.structuredContent.error).toMatchObject({ code: 'invalid_argument' });
    expect(text(refused)).toMatch(/update_service_secrets/);
  });

  it('creates secrets and configs, attaches them, and never reads a secret back', async () => {
    const secret = await call(operator, 'create_secret', { name: 'tw-secret', data: 'hunter2' });
    expect(secret.structuredContent).toMatchObject({ name: 'tw-secret', size_bytes: 7 });
    const config = await call(operator, 'create_config', { name: 'tw-config', data: 'a=1\n' });
    expect(config.structuredContent).toMatchObject({ name: 'tw-config', size_bytes: 4 });
    const attached = await call(operator, 'update_service_secrets', { id: 'tw-web', secrets: [{ name: 'tw-secret', target: 'api-key' }] });
    expect(attached.structuredContent.details).toEqual({ secrets: [{ name: 'tw-secret', target: 'api-key' }] });
    const configs = await call(operator, 'update_service_configs', { id: 'tw-web', configs: [{ name: 'tw-config' }] });
    expect(configs.structuredContent.details).toEqual({ configs: [{ name: 'tw-config', target: 'tw-config' }] });
    const audit = await fleet.broker.store.audit.recent({ limit: 50 });
    expect(JSON.stringify(audit)).not.toContain('hunter2');
    expect(JSON.stringify(audit)).not.toContain('s3cr3t');
  });

  it('refuses a new bind mount below level 3 and accepts a plain local volume', async () => {
    const volume = await call(operator, 'update_service_mounts', { id: 'tw-shop-db', mounts: [{ type: 'volume', source: 'tw-vol', target: '/data' }] });
    expect(volume.structuredContent.details).toEqual({ mounts: [{ type: 'volume', source: 'tw-vol', target: '/data', read_only: false }] });
    const bind = await call(operator, 'update_service_mounts', {
      id: 'tw-shop-db',
      mounts: [{ type: 'bind', source: '/var/run/docker.sock', target: '/var/run/docker.sock' }],
    });
    expect(bind.structuredContent.error).toMatchObject({ code: 'forbidden' });
    expect(text(bind)).toMatch(/level 3/);
    const allowed = await call(admin, 'update_service_mounts', {
      id: 'tw-shop-db',
      mounts: [{ type: 'bind', source: '/tmp', target: '/host-tmp', read_only: true }],
    });
    expect(allowed.structuredContent.details).toEqual({ mounts: [{ type: 'bind', source: '/tmp', target: '/host-tmp', read_only: true }] });
  });

  it('patches node labels, drains and reactivates a node, and refuses to demote the last manager', async () => {
    const status = await call(admin, 'get_topology', { view: 'placement' });
    const node = (status.structuredContent.nodes as { type: string; name: string }[]).find((n) => n.type === 'node')?.name as string;
    const labelled = await call(operator, 'update_node_labels', { id: node, labels: { zone: 'a', 'tw-nowhere': null } });
    expect(labelled.structuredContent.labels).toMatchObject({ zone: 'a' });
    const demote = await call(admin, 'update_node', { id: node, section: 'role', value: 'worker' });
    expect(demote.structuredContent.error).toMatchObject({ code: 'conflict' });
    expect(text(demote)).toMatch(/quorum/);
    const paused = await call(admin, 'update_node', { id: node, section: 'availability', value: 'pause' });
    expect(paused.structuredContent).toMatchObject({ availability: 'pause', role: 'manager' });
    const active = await call(admin, 'update_node', { id: node, section: 'availability', value: 'active' });
    expect(active.structuredContent).toMatchObject({ availability: 'active' });
  });

  it('removes a task (Swarm replaces it) and, with confirm only, services, secrets, configs, networks and volumes', async () => {
    await createService(docker, { name: 'tw-scratch', command: ['sleep', '3600'] });
    await waitFor(async () => (await call(admin, 'watch', { service: 'tw-scratch', timeout: 20 })).structuredContent.converged === true);
    const unconfirmed = await call(admin, 'remove_task', { id: 'tw-scratch.1' });
    expect(unconfirmed.structuredContent).toMatchObject({ error: { code: 'confirm_required' }, targets: [{ resource: 'task:tw-scratch.1' }] });
    const removed = await call(admin, 'remove_task', { id: 'tw-scratch.1', confirm: true });
    expect(removed.structuredContent).toMatchObject({ removed: 'tw-scratch.1', service: 'tw-scratch' });
    await waitFor(async () => (await call(admin, 'watch', { service: 'tw-scratch', timeout: 20 })).structuredContent.converged === true, {
      what: 'a replacement task',
    });

    const keep = await call(admin, 'remove_service', { id: 'tw-scratch' });
    expect(keep.structuredContent.error).toMatchObject({ code: 'confirm_required' });
    expect((await docker.listServices({ filters: { name: ['tw-scratch'] } })).length).toBe(1);
    expect((await call(admin, 'remove_service', { id: 'tw-scratch', confirm: true })).structuredContent).toMatchObject({
      removed: 'tw-scratch',
      type: 'service',
    });
    const inUse = await call(admin, 'remove_secret', { id: 'tw-secret', confirm: true });
    expect(inUse.isError).toBe(true);
    await call(operator, 'update_service_secrets', { id: 'tw-web', secrets: [] });
    await call(operator, 'update_service_configs', { id: 'tw-web', configs: [] });
    expect((await call(admin, 'remove_secret', { id: 'tw-secret', confirm: true })).structuredContent).toMatchObject({ removed: 'tw-secret' });
    expect((await call(admin, 'remove_config', { id: 'tw-config', confirm: true })).structuredContent).toMatchObject({ removed: 'tw-config' });
    const ingress = await call(admin, 'remove_network', { id: 'ingress', confirm: true });
    expect(ingress.structuredContent.error).toMatchObject({ code: 'invalid_argument' });
    await docker.createNetwork({ Name: 'tw-spare', Driver: 'overlay' });
    expect((await call(admin, 'remove_network', { id: 'tw-spare', confirm: true })).structuredContent).toMatchObject({ removed: 'tw-spare' });
    await docker.createVolume({ Name: 'tw-spare-vol' });
    expect((await call(admin, 'remove_volume', { name: 'tw-spare-vol', confirm: true })).structuredContent).toMatchObject({ removed: 'tw-spare-vol' });
  });

  it("removes a task's container by the task's id where only the task's own engine can (a worker's agent)", async () => {
    await createService(docker, { name: 'tw-scratch', command: ['sleep', '3600'] });
    const task = await waitFor(async () => {
      const tasks = (await docker.listTasks({ filters: { service: ['tw-scratch'], 'desired-state': ['running'] } })) as {
        ID: string;
        Status: { State: string; ContainerStatus?: { ContainerID?: string } };
      }[];
      return tasks.find((t) => t.Status.State === 'running' && t.Status.ContainerStatus?.ContainerID);
    });
    const engine = new SwarmEngine(createEngineClient(inject('dockerHost')));
    const tools = { engine, reader: new SwarmReader(engine, () => ''), localNodeId: () => '', localRole: () => 'worker' };
    const removed = await removeLocalTask(tools, task.ID);
    expect(removed).toMatchObject({ removed: 'tw-scratch.1', service: 'tw-scratch' });
    await expect(docker.getContainer(task.Status.ContainerStatus?.ContainerID ?? '').inspect()).rejects.toMatchObject({ statusCode: 404 });
    await expect(removeLocalTask(tools, task.ID)).rejects.toMatchObject({ code: 'not_found' });
    await docker.getService('tw-scratch').remove();
  });

  it("shows the change timeline, newest first, with a service's tasks", async () => {
    const events = await call(admin, 'get_events', { resource: 'tw-web', limit: 200 });
    const rows = events.structuredContent.events as { type: string; action: string; name: string; time_unix_ms: number }[];
    expect(rows.some((e) => e.type === 'service' && e.action === 'update' && e.name === 'tw-web')).toBe(true);
    expect(rows.some((e) => e.type === 'task' && e.name.startsWith('tw-web.'))).toBe(true);
    expect(rows.map((e) => e.time_unix_ms)).toEqual([...rows.map((e) => e.time_unix_ms)].sort((a, b) => b - a));
    const servicesOnly = await call(admin, 'get_events', { resource: 'tw-web', types: ['service'] });
    expect((servicesOnly.structuredContent.events as { type: string }[]).every((e) => e.type === 'service')).toBe(true);
  });

  it('fails over to another manager agent when the serving one goes away', async () => {
    const first = await call(admin, 'get_cluster_status');
    const serving = (first.structuredContent.cluster as { manager: string }).manager;
    // The serving agent's stream goes away; the other manager agent stays.
    fleet.broker.registry.find(serving)?.session?.close();
    const after = await call(admin, 'get_cluster_status');
    expect(after.isError).toBeFalsy();
    expect((after.structuredContent.cluster as { manager: string }).manager).not.toBe(serving);
  });
});
