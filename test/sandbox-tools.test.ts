import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { removeContainers, runContainer, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const NAMES = ['sb-good', 'sb-nomanifest', 'sb-broken'];

/** A sandbox container whose command writes the telemetry log and manifest, then stays up. */
function sandboxCommand(options: { manifest: boolean }): string[] {
  const write = [
    'mkdir -p /run/ephemeral-os/observability /run/ephemeral-os/layerstack',
    'printf "%s\\n" "$TELEMETRY" > /run/ephemeral-os/observability/observability.ndjson',
    options.manifest ? 'printf "%s" "$MANIFEST" > /run/ephemeral-os/layerstack/manifest.json' : 'true',
    'sleep 3600',
  ];
  return ['sh', '-c', write.join('; ')];
}

function telemetry(t: number): string {
  const lines = [
    { kind: 'span', ts: t + 200, trace: 'req-1', span: 'd-1', parent: 'd-0', name: 'workspace.exec', dur_ms: 100, status: 'completed', attrs: {} },
    { kind: 'event', ts: t + 120, trace: 'req-1', parent: 'd-1', name: 'lease.acquired', attrs: { layer_id: 'layer-7', workspace_id: 'ws-1' } },
    { kind: 'span', ts: t + 250, trace: 'req-1', span: 'd-0', name: 'daemon.dispatch', dur_ms: 250, status: 'completed', attrs: { op: 'exec_command' } },
    { kind: 'sample', ts: t + 100, scope: 'ws-1', disk_bytes: 4096, upper_bytes: 1024 },
    { kind: 'sample', ts: t + 300, scope: 'ws-1', disk_bytes: 8192, upper_bytes: 2048 },
    { kind: 'sample', ts: t + 300, scope: 'layerstack', total_bytes: 16384, staging_entry_count: 0 },
    { kind: 'event', ts: t + 400, trace: 'req-2', parent: 'e-0', name: 'lease.renewed', attrs: { layer_id: 'layer-7' } },
    { kind: 'span', ts: t + 500, trace: 'req-2', span: 'e-0', name: 'daemon.dispatch', dur_ms: 150, status: 'error', attrs: { op: 'snapshot' } },
  ].map((line) => JSON.stringify(line));
  lines.splice(3, 0, `{"kind":"event","ts":${t},"name":"huge","attrs":{"blob":"${'x'.repeat(17_000)}"}}`, '{not json at all');
  return lines.join('\n');
}

const MANIFEST = JSON.stringify({
  schema_version: 1,
  version: 7,
  root_hash: 'sha256:abc',
  layers: [
    { layer_id: 'layer-7', path: '/layers/7' },
    { layer_id: 'layer-8', path: '/layers/8', bytes: 4096 },
  ],
});

interface SandboxNode {
  sandbox_id: string;
  availability: string;
  errors: { code: string; message: string }[];
  telemetry: { records: number; dropped_oversized: number; dropped_malformed: number };
  stack: { layer_count: number | null; active_leases: number | null };
  workspaces: { workspace_id: string }[];
}

describe('sandbox observability across the fleet', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;
  const now = Date.now();

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, NAMES);
    const env = [`TELEMETRY=${telemetry(now)}`, `MANIFEST=${MANIFEST}`];
    await runContainer(docker, { name: 'sb-good', command: sandboxCommand({ manifest: true }), env, labels: { 'fleetmesh.sandbox': 'sbox-good' } });
    await runContainer(docker, {
      name: 'sb-nomanifest',
      command: sandboxCommand({ manifest: false }),
      env,
      labels: { 'fleetmesh.sandbox': 'sbox-nomanifest' },
    });
    await runContainer(docker, {
      name: 'sb-broken',
      command: ['sleep', '3600'],
      labels: { 'fleetmesh.sandbox': 'sbox-broken', 'fleetmesh.sandbox.runtime-dir': '/nowhere' },
    });
    fleet = await startTestFleet();
    const agent = { collectors: 'default' as const, dockerAddress: inject('dockerHost') };
    await fleet.addAgent('sb-host-a', agent);
    await fleet.addAgent('sb-host-b', agent);
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    // Wait for the writes inside the containers, and for the broker's index to know the sandboxes.
    await waitFor(async () => {
      // Other tests' sandboxes may share the engine: this file's three, on both hosts.
      const rows = (await call(client, 'find', { type: 'sandbox' })).structuredContent.rows as { id: string; host: string }[];
      return rows.filter((row) => ['sbox-good', 'sbox-nomanifest', 'sbox-broken'].includes(row.id)).length === 6;
    });
  });
  afterAll(async () => {
    await client?.close();
    await fleet?.stop();
    await removeContainers(docker, NAMES);
  });

  it('snapshots every ready sandbox on every host, each with its own availability and errors', async () => {
    const result = await waitFor(async () => {
      const r = await call(client, 'snapshot');
      const nodes = (r.structuredContent.hosts as { sandboxes?: SandboxNode[] }[])[0]?.sandboxes ?? [];
      return nodes.find((n) => n.sandbox_id === 'sbox-good')?.availability === 'available' ? r : undefined;
    });
    const hosts = result.structuredContent.hosts as { host: string; availability: string; sandboxes: SandboxNode[] }[];
    expect(hosts.map((h) => [h.host, h.availability])).toEqual([
      ['sb-host-a', 'available'],
      ['sb-host-b', 'available'],
    ]);
    for (const host of hosts) {
      const byId = Object.fromEntries(host.sandboxes.map((s) => [s.sandbox_id, s]));
      expect(byId['sbox-good']).toMatchObject({ availability: 'available', errors: [], stack: { layer_count: 2, active_leases: 1 } });
      expect(byId['sbox-good']?.telemetry).toEqual({ records: 8, dropped_oversized: 1, dropped_malformed: 1 });
      expect(byId['sbox-good']?.workspaces.map((w) => w.workspace_id)).toEqual(['ws-1']);
      expect(byId['sbox-nomanifest']).toMatchObject({ availability: 'partial', errors: [{ code: 'not_found' }] });
      expect(byId['sbox-broken']?.availability).toBe('unavailable');
      expect(byId['sbox-broken']?.errors.length).toBe(2);
    }
  });

  it('answers one sandbox with its node shape, finding its host, or asking which when two hosts hold it', async () => {
    const ambiguous = await call(client, 'snapshot', { sandbox_id: 'sbox-good' });
    expect(ambiguous.structuredContent.error).toMatchObject({ code: 'ambiguous' });
    const one = await call(client, 'snapshot', { sandbox_id: 'sbox-good', host: 'sb-host-a' });
    expect(one.structuredContent).toMatchObject({ host: 'sb-host-a', sandbox_id: 'sbox-good', availability: 'available', lifecycle_state: 'ready' });
    expect(one.structuredContent.sandboxes).toBeUndefined();
    const missing = await call(client, 'snapshot', { sandbox_id: 'sbox-nope' });
    expect(missing.structuredContent.error).toMatchObject({ code: 'not_found' });
  });

  it('folds a trace into a span forest with offsets, children and events', async () => {
    const last = await call(client, 'trace', { sandbox_id: 'sbox-good', host: 'sb-host-a' });
    expect(last.structuredContent).toMatchObject({ view: 'trace', trace: 'req-2' });
    const req1 = await call(client, 'trace', { sandbox_id: 'sbox-good', host: 'sb-host-a', trace_id: 'req-1' });
    const spans = req1.structuredContent.spans as {
      span: { span: string };
      offset_ms: number;
      children: { span: { span: string }; offset_ms: number; events: { name: string }[] }[];
    }[];
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({ span: { span: 'd-0', name: 'daemon.dispatch' }, offset_ms: 0 });
    expect(spans[0]?.children[0]).toMatchObject({ span: { span: 'd-1' }, offset_ms: 100, events: [{ name: 'lease.acquired' }] });
    const unknown = await call(client, 'trace', { sandbox_id: 'sbox-good', host: 'sb-host-a', trace_id: 'no-such-trace' });
    expect(unknown.isError).toBeFalsy();
    expect(unknown.structuredContent.spans).toEqual([]);
  });

  it('filters events by exact name, time and count, newest first', async () => {
    const all = await call(client, 'events', { sandbox_id: 'sbox-good', host: 'sb-host-b' });
    expect((all.structuredContent.events as { name: string }[]).map((e) => e.name)).toEqual(['lease.renewed', 'lease.acquired']);
    const named = await call(client, 'events', { sandbox_id: 'sbox-good', host: 'sb-host-b', name: 'lease.acquired' });
    expect(named.structuredContent.events).toEqual([
      expect.objectContaining({ name: 'lease.acquired', trace: 'req-1', parent: 'd-1', attrs: { layer_id: 'layer-7', workspace_id: 'ws-1' } }),
    ]);
    const newest = await call(client, 'events', { sandbox_id: 'sbox-good', host: 'sb-host-b', last_n: 1 });
    expect((newest.structuredContent.events as { name: string }[]).map((e) => e.name)).toEqual(['lease.renewed']);
    const later = await call(client, 'events', { sandbox_id: 'sbox-good', host: 'sb-host-b', since_ms: now + 300 });
    expect((later.structuredContent.events as unknown[]).length).toBe(1);
  });

  it('reads engine counters with deltas for the sandbox scope, and daemon samples for a workspace', async () => {
    await call(client, 'cgroup', { sandbox_id: 'sbox-good', host: 'sb-host-a' });
    const second = await call(client, 'cgroup', { sandbox_id: 'sbox-good', host: 'sb-host-a', window_ms: 600_000 });
    const series = second.structuredContent.series as { sample_delta_ms: number | null; metrics: Record<string, unknown>; deltas: Record<string, number> }[];
    expect(series.length).toBeGreaterThanOrEqual(2);
    expect(series.at(-1)?.metrics).toMatchObject({
      metrics_source: 'docker_engine',
      cpu_usec: expect.any(Number),
      mem_cur: expect.any(Number),
      mem_max: expect.any(Number),
    });
    expect(series.at(-1)?.sample_delta_ms).toBeGreaterThanOrEqual(0);
    expect(Object.keys(series.at(-1)?.deltas ?? {})).toEqual(expect.arrayContaining(['cpu_usec', 'io_rbytes']));
    const workspace = await call(client, 'cgroup', { sandbox_id: 'sbox-good', host: 'sb-host-a', scope: 'ws-1', window_ms: 600_000 });
    const daemon = workspace.structuredContent.series as { deltas: Record<string, number>; metrics: Record<string, unknown> }[];
    expect(daemon.map((s) => s.metrics.upper_bytes)).toEqual([1024, 2048]);
    expect(daemon[1]?.deltas).toMatchObject({ disk_bytes: 4096, upper_bytes: 1024 });
  });

  it("shows the layer stack in manifest order with leases, and one workspace's view", async () => {
    const stack = await call(client, 'layerstack', { sandbox_id: 'sbox-good', host: 'sb-host-a', window_ms: 600_000 });
    expect(stack.structuredContent).toMatchObject({
      view: 'layerstack',
      manifest_version: 7,
      root_hash: 'sha256:abc',
      active_lease_count: 1,
      total_bytes: 16384,
    });
    expect(stack.structuredContent.layers).toEqual([
      { layer_id: 'layer-7', path: '/layers/7', bytes: null, allocated_bytes: null, leased_by_workspaces: 1, booked_by: ['ws-1'] },
      { layer_id: 'layer-8', path: '/layers/8', bytes: 4096, allocated_bytes: null, leased_by_workspaces: 0, booked_by: [] },
    ]);
    const workspace = await call(client, 'layerstack', { sandbox_id: 'sbox-good', host: 'sb-host-a', workspace_id: 'ws-1' });
    expect(workspace.structuredContent).toMatchObject({ view: 'layerstack', workspace: 'ws-1', mounts: ['layer-7'], upper_bytes: 2048 });
  });

  it('finds the one host that can answer when another holder is offline', async () => {
    fleet.broker.registry.find('sb-host-b')?.session?.close({ code: 14, details: 'test' });
    await waitFor(() => !fleet.broker.registry.find('sb-host-b')?.session);
    const located = await call(client, 'snapshot', { sandbox_id: 'sbox-nomanifest' });
    expect(located.structuredContent).toMatchObject({ host: 'sb-host-a', sandbox_id: 'sbox-nomanifest', availability: 'partial' });
    // The agent reconnects by itself.
    await waitFor(() => fleet.broker.registry.find('sb-host-b')?.state === 'online');
  });

  it('lists sandboxes in find and describes one', async () => {
    const found = await call(client, 'find', { type: 'sandbox', query: 'sbox-good' });
    expect((found.structuredContent.rows as { host: string; state: string }[]).map((r) => [r.host, r.state])).toEqual([
      ['sb-host-a', 'ready'],
      ['sb-host-b', 'ready'],
    ]);
    const described = await call(client, 'describe', { type: 'sandbox', id: 'sb-host-a/sbox-good' });
    expect(described.structuredContent).toMatchObject({ type: 'sandbox', name: 'sbox-good', host: 'sb-host-a', details: { container: 'sb-good' } });
  });
});
