import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cgroup, events, layerstack, snapshot, trace } from '../../../shared/domains/sandbox/sandbox-actions.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { FakeEngine } from '../../../test/harness/fake-engine.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import type { EngineStats } from '../../engine/engine-stats.ts';
import type { SandboxCollector } from './sandbox-collector.ts';
import { sandboxPlugin } from './sandbox-plugin.ts';

const LOG = '/run/ephemeral-os/observability/observability.ndjson';
const MANIFEST = '/run/ephemeral-os/layerstack/manifest.json';
const T = 1_800_000_000_000;

const telemetry = (...lines: object[]) => lines.map((line) => JSON.stringify(line)).join('\n');

const TELEMETRY = telemetry(
  { kind: 'span', ts: T + 250, trace: 'req-1', span: 'd-0', name: 'daemon.dispatch', dur_ms: 250, status: 'completed', attrs: {} },
  { kind: 'span', ts: T + 200, trace: 'req-1', span: 'd-1', parent: 'd-0', name: 'workspace.exec', dur_ms: 100, status: 'completed', attrs: {} },
  { kind: 'event', ts: T + 120, trace: 'req-1', parent: 'd-1', name: 'lease.acquired', attrs: { layer_id: 'layer-7', workspace_id: 'ws-1' } },
  { kind: 'sample', ts: T + 300, scope: 'ws-1', upper_bytes: 2048 },
);

const LAYERS = JSON.stringify({ schema_version: 1, version: 3, layers: [{ layer_id: 'layer-7', path: '/layers/7', bytes: 4096 }] });

/** An engine sample of a sandbox container: CPU in nanoseconds, memory and block I/O in bytes. */
function engineSample(cpuNs: number, readBytes: number): EngineStats {
  return {
    read: new Date().toISOString(),
    cpu_stats: { cpu_usage: { total_usage: cpuNs }, system_cpu_usage: 1e12, online_cpus: 2 },
    precpu_stats: { cpu_usage: { total_usage: 0 }, system_cpu_usage: 0 },
    memory_stats: { usage: 64 * 1024 ** 2, limit: 512 * 1024 ** 2 },
    blkio_stats: { io_service_bytes_recursive: [{ op: 'read', value: readBytes }] },
  };
}

describe('the sandbox collector on a fake engine', () => {
  const running: CollectorCalls<SandboxCollector>[] = [];
  const temps: { remove(): void }[] = [];
  afterEach(async () => {
    for (const calls of running.splice(0)) await calls.stop();
    for (const temp of temps.splice(0)) temp.remove();
  });

  function sandboxesOn(engine: FakeEngine): CollectorCalls<SandboxCollector> {
    const calls = new CollectorCalls(sandboxPlugin.create, engine.client);
    running.push(calls);
    return calls;
  }

  it('snapshots each running sandbox as a node of the same shape, partial or unavailable with the reasons, through the archive endpoint', async () => {
    const engine = new FakeEngine();
    const labels = (id: string) => ({ 'fleetmesh.sandbox': id });
    engine.addContainer('sb-good', { labels: labels('good'), files: { [LOG]: TELEMETRY, [MANIFEST]: LAYERS }, stats: engineSample(5e6, 100) });
    engine.addContainer('sb-nomanifest', { labels: labels('nomanifest'), files: { [LOG]: TELEMETRY }, stats: engineSample(5e6, 100) });
    engine.addContainer('sb-broken', { labels: { ...labels('broken'), 'fleetmesh.sandbox.runtime-dir': '/nowhere' }, stats: engineSample(5e6, 100) });
    engine.addContainer('sb-stopped', { labels: labels('stopped'), state: 'exited' });
    engine.addContainer('plain', { files: { [LOG]: TELEMETRY } });
    const calls = sandboxesOn(engine);

    const answer = await calls.call(snapshot, {});
    expect(answer.errors).toEqual([]);
    const nodes = answer.payload?.sandboxes ?? [];
    expect(nodes.map((n) => [n.sandbox_id, n.availability])).toEqual([
      ['broken', 'unavailable'],
      ['good', 'available'],
      ['nomanifest', 'partial'],
    ]);
    const good = nodes[1];
    expect(good).toMatchObject({
      container: 'sb-good',
      lifecycle_state: 'ready',
      errors: [],
      stack: { layer_count: 1, layers_bytes: 4096, active_leases: 1 },
      telemetry: { records: 4, dropped_oversized: 0, dropped_malformed: 0 },
      workspaces: [{ workspace_id: 'ws-1', metrics: { upper_bytes: 2048 } }],
    });
    expect(good?.resources.latest).toMatchObject({ metrics_source: 'docker_engine', cpu_usec: 5000, mem_cur: 64 * 1024 ** 2, io_rbytes: 100 });
    expect(nodes[2]?.errors).toEqual([expect.objectContaining({ code: 'not_found', message: expect.stringContaining('LayerStack manifest') })]);
    expect(nodes[0]?.errors.map((e) => e.code)).toEqual(['not_found', 'not_found']);

    const stopped = await calls.call(snapshot, { sandbox_id: 'stopped' });
    expect(stopped.payload).toMatchObject({ sandbox_id: 'stopped', lifecycle_state: 'stopped', availability: 'unavailable' });
    expect(stopped.errors).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'collector_unavailable', collector: 'sandbox' })]));
    const unknown = await calls.call(snapshot, { sandbox_id: 'nope' });
    expect(unknown.errors).toEqual([expect.objectContaining({ code: 'not_found', hint: expect.stringContaining('snapshot without sandbox_id') })]);
  });

  it('reads the telemetry afresh once it changed, and folds a trace into its span tree', async () => {
    const engine = new FakeEngine();
    const box = engine.addContainer('sb', { labels: { 'fleetmesh.sandbox': 'sb' }, files: { [LOG]: TELEMETRY, [MANIFEST]: LAYERS } });
    const calls = sandboxesOn(engine);

    const forest = await calls.call(trace, { sandbox_id: 'sb', trace_id: 'req-1' });
    expect(forest.payload?.spans).toEqual([
      expect.objectContaining({ span: expect.objectContaining({ span: 'd-0' }), offset_ms: 0, children: [expect.objectContaining({ offset_ms: 100 })] }),
    ]);
    expect((await calls.call(events, { sandbox_id: 'sb' })).payload?.events.map((e) => e.name)).toEqual(['lease.acquired']);

    box.files.set(
      LOG,
      `${TELEMETRY}\n${telemetry({ kind: 'event', ts: T + 400, trace: 'req-2', name: 'lease.released', attrs: { layer_id: 'layer-7', workspace_id: 'ws-1' } })}`,
    );
    expect((await calls.call(events, { sandbox_id: 'sb' })).payload?.events.map((e) => e.name)).toEqual(['lease.released', 'lease.acquired']);
    const stack = await calls.call(layerstack, { sandbox_id: 'sb' });
    expect(stack.payload).toMatchObject({ manifest_version: 3, active_lease_count: 0 });
  });

  it("reads a runtime dir the container bind-mounts from the host's path, without the engine's archive", async () => {
    const temp = makeTempDir('fm-sandbox-host-');
    temps.push(temp);
    mkdirSync(join(temp.path, 'observability'), { recursive: true });
    writeFileSync(join(temp.path, 'observability', 'observability.ndjson'), TELEMETRY);
    const engine = new FakeEngine();
    engine.addContainer('sb', { labels: { 'fleetmesh.sandbox': 'sb' }, mounts: [{ type: 'bind', source: temp.path, destination: '/run/ephemeral-os' }] });
    const calls = sandboxesOn(engine);

    const answer = await calls.call(events, { sandbox_id: 'sb' });
    expect(answer.payload?.events.map((e) => e.name)).toEqual(['lease.acquired']);
  });

  it("keeps the engine's samples of a sandbox and answers their deltas", async () => {
    const engine = new FakeEngine();
    const box = engine.addContainer('sb', { labels: { 'fleetmesh.sandbox': 'sb' }, stats: engineSample(1e6, 100) });
    const calls = sandboxesOn(engine);

    await calls.call(cgroup, { sandbox_id: 'sb' });
    box.stats = engineSample(4e6, 600);
    const answer = await calls.call(cgroup, { sandbox_id: 'sb', window_ms: 600_000 });
    expect(answer.payload?.series.at(-1)?.deltas).toMatchObject({ cpu_usec: 3000, io_rbytes: 500 });
  });

  it('answers collector_unavailable while the engine is away', async () => {
    const engine = new FakeEngine();
    engine.addContainer('sb', { labels: { 'fleetmesh.sandbox': 'sb' } });
    const calls = sandboxesOn(engine);
    engine.stopEngine();

    expect((await calls.collector.probe()).reason).toMatch(/^the Docker engine cannot be reached: connect ECONNREFUSED/);
    expect((await calls.call(snapshot, {})).errors).toEqual([expect.objectContaining({ code: 'collector_unavailable', collector: 'sandbox' })]);
  });
});
