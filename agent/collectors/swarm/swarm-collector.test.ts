import { afterEach, describe, expect, it } from 'vitest';
import { createSecret, getClusterStatus, getEvents, getTopology, scaleService } from '../../../shared/domains/swarm/swarm-actions.ts';
import type { SwarmSnapshot } from '../../../shared/engine/records.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { FakeEngine } from '../../../test/harness/fake-engine.ts';
import { FakeSwarm } from '../../../test/harness/fake-swarm.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import type { SwarmCollector } from './swarm-collector.ts';
import { swarmPlugin } from './swarm-plugin.ts';

describe('the swarm collector on a fake engine', () => {
  const running: CollectorCalls<SwarmCollector>[] = [];
  afterEach(async () => {
    for (const calls of running.splice(0)) await calls.stop();
  });

  function swarmOn(engine: FakeEngine, swarmName?: string): CollectorCalls<SwarmCollector> {
    const calls = new CollectorCalls(swarmPlugin.create, engine.client, {}, swarmName ? { 'swarm-name': swarmName } : {});
    running.push(calls);
    return calls;
  }

  function managerEngine(): { engine: FakeEngine; swarm: FakeSwarm } {
    const engine = new FakeEngine('m1');
    const swarm = new FakeSwarm('m1', 'manager');
    engine.swarm = swarm;
    return { engine, swarm };
  }

  it('is unavailable outside a swarm and on a worker, saying why, and states a worker its role', async () => {
    const alone = swarmOn(new FakeEngine('solo'));
    expect(await alone.collector.probe()).toEqual({ available: false, absent: true, reason: 'this engine is not part of a swarm' });
    expect(alone.collector.facts()).toEqual({});

    const engine = new FakeEngine('w1');
    engine.swarm = new FakeSwarm('w1', 'worker');
    const worker = swarmOn(engine);
    expect(await worker.collector.probe()).toMatchObject({
      absent: true,
      reason: expect.stringMatching(/swarm worker; swarm tools are served by the agents on managers/),
    });
    expect(worker.collector.facts()).toMatchObject({ swarm_role: 'worker', swarm_node_id: engine.swarm.localNode.ID });
    const refused = await worker.call(getClusterStatus, {});
    expect(refused.errors).toEqual([expect.objectContaining({ code: 'collector_unavailable', collector: 'swarm' })]);
  });

  it('tells what is wrong with the swarm, worst first: a node down, then a service short of its replicas', async () => {
    const { engine, swarm } = managerEngine();
    swarm.addNode('w2', { state: 'down' });
    swarm.addService('web', { replicas: 3, running: 1 });
    swarm.addService('api', { replicas: 2 });
    const calls = swarmOn(engine);

    const status = await calls.call(getClusterStatus, {});
    expect(status.errors).toEqual([]);
    expect(status.payload).toMatchObject({
      health: 'unhealthy',
      nodes: { total: 2, ready: 1, down: ['w2'], managers: 1, reachable_managers: 1 },
      services: { total: 2, converged: 1, not_converged: [{ name: 'web', running: 1, desired: 3, state: 'degraded' }] },
    });
    expect(status.payload?.problems[0]).toBe('node w2 is down');
    expect(status.payload?.problems[1]).toMatch(/^service web: 1\/3 running \(degraded\)/);

    const placement = await calls.call(getTopology, { view: 'placement' });
    expect(placement.payload?.edges).toEqual(expect.arrayContaining([{ from: 'm1', to: 'api', detail: '2 tasks' }]));
  });

  it('reports a snapshot of the swarm at start, naming secrets and environment variables without their values', async () => {
    const { engine, swarm } = managerEngine();
    swarm.addService('web', { replicas: 2, labels: { 'com.docker.stack.namespace': 'shop' } });
    swarm.addSecret('db-password');
    engine.addVolume('web-data');
    const calls = swarmOn(engine, 'prod');
    await calls.collector.start();

    const [snapshot] = await waitFor(() => (calls.reportsOf('swarm_snapshot').length ? calls.reportsOf<SwarmSnapshot>('swarm_snapshot') : undefined));
    expect(snapshot).toMatchObject({ cluster_id: swarm.clusterId, cluster_name: 'prod', manager_node_id: swarm.localNode.ID });
    expect(snapshot?.services).toEqual([expect.objectContaining({ name: 'web', stack: 'shop', replicas: 2, env_names: ['SECRET_TOKEN'] })]);
    expect(snapshot?.tasks.map((t) => t.name).sort()).toEqual(['web.1', 'web.2']);
    expect(snapshot?.secrets).toEqual([expect.objectContaining({ name: 'db-password', size_bytes: null })]);
    expect(snapshot?.networks.map((n) => n.name)).toEqual(['ingress']);
    expect(snapshot?.volumes.map((v) => v.name)).toEqual(['web-data']);
    expect(JSON.stringify(snapshot)).not.toContain('hunter2');
    expect(calls.collector.facts()).toMatchObject({ swarm_role: 'manager', swarm_name: 'prod' });
  });

  it('scales a service at the version it read, and answers conflict, changing nothing, when the service changed since', async () => {
    const { engine, swarm } = managerEngine();
    const web = swarm.addService('web', { replicas: 1 });
    const calls = swarmOn(engine);
    const read = web.Version.Index;

    const scaled = await calls.call(scaleService, { id: 'web', replicas: 3 });
    expect(scaled.errors).toEqual([]);
    expect(scaled.payload).toMatchObject({ name: 'web', replicas: 3, running: 3, converged: true, version: read + 1 });

    const stale = await calls.call(scaleService, { id: 'web', replicas: 5, version: read });
    expect(stale.errors).toEqual([expect.objectContaining({ code: 'conflict', hint: expect.stringMatching(/^Re-read it/) })]);
    expect(web.Spec.Mode.Replicated.Replicas).toBe(3);
  });

  it('creates a secret and answers its size, never its data', async () => {
    const { engine, swarm } = managerEngine();
    const calls = swarmOn(engine);

    const created = await calls.call(createSecret, { name: 'api-key', data: 'c2VjcmV0', encoding: 'base64' });
    expect(created.payload).toMatchObject({ name: 'api-key', size_bytes: 6 });
    expect(JSON.stringify(created.payload)).not.toContain('c2VjcmV0');
    expect(swarm.secrets.map((s) => s.Spec.Name)).toEqual(['api-key']);
    const again = await calls.call(createSecret, { name: 'api-key', data: 'other' });
    expect(again.errors).toEqual([expect.objectContaining({ code: 'conflict' })]);
  });

  it("names a task's container events after the task (service.slot) in the swarm's timeline", async () => {
    const { engine, swarm } = managerEngine();
    swarm.addService('web');
    const calls = swarmOn(engine);
    await calls.collector.start();

    engine.emit('container', 'die', {
      id: 'c0ffee000000',
      attributes: { name: 'web.1.abcdefghijklmnopqrstuvwxy', 'com.docker.swarm.task.name': 'web.1.abcdefghijklmnopqrstuvwxy', exitCode: '1' },
    });
    engine.emit('container', 'die', { id: 'beef00000000', attributes: { name: 'not-a-task', exitCode: '0' } });
    const timeline = await waitFor(async () => {
      const answer = await calls.call(getEvents, { types: ['task'] });
      return answer.payload?.events.length ? answer.payload.events : undefined;
    });
    expect(timeline).toEqual([expect.objectContaining({ type: 'task', action: 'die', name: 'web.1', detail: 'exit code 1' })]);
  });
});
