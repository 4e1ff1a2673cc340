import { afterEach, describe, expect, it } from 'vitest';
import {
  dockerEvents,
  dockerInspect,
  dockerList,
  dockerLogs,
  dockerStart,
  dockerStats,
  dockerStop,
  dockerTop,
} from '../../../shared/domains/docker/docker-actions.ts';
import type { ContainerInventory } from '../../../shared/engine/records.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { FakeEngine } from '../../../test/harness/fake-engine.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import type { EngineStats } from '../../engine/engine-stats.ts';
import type { DockerCollector } from './docker-collector.ts';
import { dockerPlugin } from './docker-plugin.ts';

/** A streamed stats sample: a tenth of two cores' time since the previous one, 80 MiB used of 1 GiB once the page cache is left out. */
const SAMPLE: EngineStats = {
  read: '2026-11-30T10:00:01Z',
  cpu_stats: { cpu_usage: { total_usage: 2e9 }, system_cpu_usage: 1e11, online_cpus: 2 },
  precpu_stats: { cpu_usage: { total_usage: 1e9 }, system_cpu_usage: 9e10 },
  memory_stats: { usage: 100 * 1024 ** 2, limit: 1024 ** 3, stats: { inactive_file: 20 * 1024 ** 2 } },
  networks: { eth0: { rx_bytes: 1000, tx_bytes: 500 } },
  pids_stats: { current: 3 },
};

describe('the docker collector on a fake engine', () => {
  const running: CollectorCalls<DockerCollector>[] = [];
  afterEach(async () => {
    for (const calls of running.splice(0)) await calls.stop();
  });

  function dockerOn(engine: FakeEngine): CollectorCalls<DockerCollector> {
    const calls = new CollectorCalls(dockerPlugin.create, engine.client);
    running.push(calls);
    return calls;
  }

  it('lists the containers sorted by name, with numbers, ports, health and restarts, and filters them by label', async () => {
    const engine = new FakeEngine();
    engine.addContainer('web', { labels: { role: 'web' }, ports: [{ private: 80, public: 8080, protocol: 'tcp' }], health: 'healthy', restartCount: 2 });
    engine.addContainer('batch', { state: 'exited', exitCode: 3 });
    const calls = dockerOn(engine);

    const all = await calls.call(dockerList, {});
    expect(all.errors).toEqual([]);
    expect(all.payload?.containers.map((c) => [c.name, c.state])).toEqual([
      ['batch', 'exited'],
      ['web', 'running'],
    ]);
    expect(all.payload?.containers[1]).toMatchObject({
      health: 'healthy',
      restart_count: 2,
      ports: [{ private_port: 80, public_port: 8080, protocol: 'tcp', ip: '0.0.0.0' }],
      labels: { role: 'web' },
    });
    expect(all.payload?.containers[1]?.started_at_unix_ms).toBeGreaterThan(1_600_000_000_000);

    const web = await calls.call(dockerList, { label: 'role=web' });
    expect(web.payload?.containers.map((c) => c.name)).toEqual(['web']);
    expect((await calls.call(dockerList, { all: false })).payload?.count).toBe(1);
  });

  it('refuses a name shaped like a flag, names the closest containers for an unknown one, and an ambiguous id prefix', async () => {
    const engine = new FakeEngine();
    const first = engine.addContainer('api-server');
    const second = engine.addContainer('api-worker');
    first.id = `abcd1${first.id.slice(5)}`;
    second.id = `abcd2${second.id.slice(5)}`;
    const calls = dockerOn(engine);

    expect((await calls.call(dockerInspect, { name: '--privileged' })).errors).toEqual([expect.objectContaining({ code: 'invalid_argument' })]);
    const unknown = await calls.call(dockerInspect, { name: 'api-servr' });
    expect(unknown.errors).toEqual([expect.objectContaining({ code: 'not_found', hint: expect.stringContaining('api-server') })]);
    const ambiguous = await calls.call(dockerInspect, { name: 'abcd' });
    expect(ambiguous.errors).toEqual([expect.objectContaining({ code: 'ambiguous', hint: expect.stringContaining('api-server, api-worker') })]);
    expect((await calls.call(dockerInspect, { name: 'abcd2' })).payload?.name).toBe('api-worker');
  });

  it("names a container's environment variables without their values", async () => {
    const engine = new FakeEngine();
    engine.addContainer('secret', { env: ['API_PASSWORD=hunter2', 'MODE=prod'] });
    const calls = dockerOn(engine);

    const answer = await calls.call(dockerInspect, { name: 'secret' });
    expect(answer.payload?.env_names).toEqual(['API_PASSWORD', 'MODE']);
    expect(JSON.stringify(answer.payload)).not.toContain('hunter2');
  });

  it('stops and starts a container, answering changed: false when it already was in that state', async () => {
    const engine = new FakeEngine();
    engine.addContainer('web');
    const calls = dockerOn(engine);

    expect((await calls.call(dockerStart, { name: 'web' })).payload).toMatchObject({ state: 'running', changed: false });
    expect((await calls.call(dockerStop, { name: 'web' })).payload).toMatchObject({ state: 'exited', running: false, changed: true });
    expect(engine.container('web').state).toBe('exited');
    expect((await calls.call(dockerStop, { name: 'web' })).payload).toMatchObject({ changed: false });
    expect((await calls.call(dockerTop, { name: 'web' })).errors).toEqual([
      expect.objectContaining({ code: 'conflict', hint: expect.stringContaining('docker_start') }),
    ]);
    expect((await calls.call(dockerStart, { name: 'web' })).payload).toMatchObject({ state: 'running', changed: true });
    expect((await calls.call(dockerTop, { name: 'web' })).payload).toMatchObject({ titles: ['pid', 'user', 'command'], processes: [{ pid: '1' }] });
  });

  it('tells stdout from stderr in the logs of a container without a TTY, and keeps the last lines asked for', async () => {
    const engine = new FakeEngine();
    engine.addContainer('logger', {
      logs: [
        { stream: 'stdout', text: 'out 1' },
        { stream: 'stderr', text: 'err 1' },
        { stream: 'stdout', text: 'out 2' },
      ],
    });
    const calls = dockerOn(engine);

    const both = await calls.call(dockerLogs, { name: 'logger' });
    expect(both.payload?.lines).toEqual([
      { stream: 'stdout', text: 'out 1' },
      { stream: 'stderr', text: 'err 1' },
      { stream: 'stdout', text: 'out 2' },
    ]);
    expect((await calls.call(dockerLogs, { name: 'logger', stream: 'stderr' })).payload?.lines).toEqual([{ stream: 'stderr', text: 'err 1' }]);
    const last = await calls.call(dockerLogs, { name: 'logger', lines: 1 });
    expect(last.payload?.lines.map((line) => line.text)).toEqual(['out 2']);
  });

  it('gives the figures docker stats shows, from the stream of each running container', async () => {
    const engine = new FakeEngine();
    engine.addContainer('web', { stats: SAMPLE });
    const calls = dockerOn(engine);

    const answer = await calls.call(dockerStats, {});
    expect(answer.errors).toEqual([]);
    expect(answer.payload?.containers).toEqual([
      expect.objectContaining({ name: 'web', cpu_percent: 20, memory_usage_bytes: 80 * 1024 ** 2, memory_limit_bytes: 1024 ** 3, net_rx_bytes: 1000, pids: 3 }),
    ]);
  });

  it("reports the host's containers and volumes at start, then each container event as it happens, which docker_events lists", async () => {
    const engine = new FakeEngine();
    const web = engine.addContainer('web', {
      labels: { 'com.docker.stack.namespace': 'shop' },
      mounts: [{ type: 'volume', volume: 'web-data', destination: '/data' }],
    });
    engine.addContainer('box', { labels: { 'fleetmesh.sandbox': 'sb-1' } });
    const calls = dockerOn(engine);
    await calls.collector.start();

    const [inventory] = await waitFor(() =>
      calls.reportsOf<ContainerInventory>('container_inventory').length ? calls.reportsOf<ContainerInventory>('container_inventory') : undefined,
    );
    expect(inventory?.containers.map((c) => [c.name, c.stack, c.sandbox_id])).toEqual(
      expect.arrayContaining([
        ['web', 'shop', null],
        ['box', null, 'sb-1'],
      ]),
    );
    expect(inventory?.volumes).toEqual([expect.objectContaining({ name: 'web-data', driver: 'local' })]);
    expect(calls.collector.facts()).toEqual({ docker_version: '27.0.0' });

    engine.exit(web, 137, true);
    const events = await waitFor(() => (calls.reportsOf('container_event').length >= 2 ? calls.reportsOf<{ action: string }>('container_event') : undefined));
    expect(events.map((event) => event.action)).toEqual(['oom', 'die']);
    const listed = await calls.call(dockerEvents, { types: ['die'] });
    expect(listed.payload?.events).toEqual([expect.objectContaining({ action: 'die', name: 'web', exit_code: 137, id: web.id.slice(0, 12) })]);
  });

  it('answers collector_unavailable with the reason while the engine is away, and works again once it is back', async () => {
    const engine = new FakeEngine();
    engine.addContainer('web');
    const calls = dockerOn(engine);
    expect((await calls.collector.probe()).available).toBe(true);

    engine.stopEngine();
    const away = await calls.call(dockerList, {});
    expect(away.errors).toEqual([
      expect.objectContaining({
        code: 'collector_unavailable',
        collector: 'docker',
        message: expect.stringContaining('ECONNREFUSED'),
        hint: expect.stringContaining('--docker-socket'),
      }),
    ]);
    expect(calls.availabilityChanges).toBe(1);

    engine.startEngine();
    expect((await calls.call(dockerList, {})).payload?.count).toBe(1);
  });
});
