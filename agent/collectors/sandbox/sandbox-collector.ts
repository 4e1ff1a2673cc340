import type { ContainerInfo } from 'dockerode';
import type { cgroup, events, layerstack, snapshot, trace } from '../../../shared/domains/sandbox/sandbox-actions.ts';
import { FleetError, isErrorCode } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { containerName } from '../../engine/container-directory.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { dockerMessage, engineAbsent } from '../../engine/engine-errors.ts';
import type { EngineStats } from '../../engine/engine-stats.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { ContainerFiles } from './container-files.ts';
import { parseTelemetry, type Telemetry, traceForest } from './telemetry.ts';

const DEFAULT_SANDBOX_LABEL = 'fleetmesh.sandbox';
const DEFAULT_RUNTIME_DIR = '/run/ephemeral-os';
/** Each sandbox of a fleet snapshot gets this long; a slow one is reported, not waited for. */
const PER_SANDBOX_MS = 5000;
const CONCURRENCY = 4;
const HISTORY_MS = 600_000;

interface SandboxCollectorOptions {
  /** Sandboxes are listed, sampled and read (through the archive endpoint, on the modem) on the engine. */
  docker: Pick<EngineClient, 'version' | 'listContainers' | 'getContainer' | 'modem'>;
  log: Logger;
  /** The label marking a sandbox container; its value is the sandbox id. */
  label?: string;
}

interface Sandbox {
  id: string;
  container: ContainerInfo;
  runtimeDir: string;
}

interface Manifest {
  schema_version?: number;
  version?: number;
  root_hash?: string;
  layers?: { layer_id: string; path: string; bytes?: number; allocated_bytes?: number }[];
}

type EngineSample = { ts: number; metrics: Record<string, number | string> };

function lifecycle(state: string): string {
  if (state === 'running') return 'ready';
  if (state === 'created' || state === 'restarting') return 'starting';
  if (state === 'paused') return 'paused';
  return 'stopped';
}

async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T);
      }
    }),
  );
  return results;
}

function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new FleetError('deadline_exceeded', `${what} took longer than ${ms} ms`)), ms);
    }),
  ]);
}

/** Lease events tell which workspaces hold which layers. */
function leases(telemetry: Telemetry): Map<string, Set<string>> {
  const held = new Map<string, Set<string>>();
  for (const event of [...telemetry.events].sort((a, b) => a.ts - b.ts)) {
    const layer = typeof event.attrs.layer_id === 'string' ? event.attrs.layer_id : undefined;
    const workspace = typeof event.attrs.workspace_id === 'string' ? event.attrs.workspace_id : 'unknown';
    if (!layer) continue;
    const set = held.get(layer) ?? new Set<string>();
    if (event.name === 'lease.acquired') set.add(workspace);
    if (event.name === 'lease.released') set.delete(workspace);
    held.set(layer, set);
  }
  return held;
}

/**
 * sandbox-mcp's observability tools for the sandboxes on this host: containers
 * carrying the sandbox label, whose daemon writes the ephemeral-os telemetry log
 * and LayerStack manifest. Everything is read through the engine's archive
 * endpoint (or a bind-mounted host path), never by exec.
 */
export class SandboxCollector implements Collector {
  readonly name = 'sandbox';
  private readonly files: ContainerFiles;
  private readonly label: string;
  private readonly history = new Map<string, EngineSample[]>();
  private status: CollectorStatus = { available: false, reason: 'not probed yet' };

  constructor(private readonly options: SandboxCollectorOptions) {
    this.files = new ContainerFiles(options.docker);
    this.label = options.label ?? DEFAULT_SANDBOX_LABEL;
  }

  async probe(): Promise<CollectorStatus> {
    try {
      await this.options.docker.version();
      this.status = { available: true, reason: '' };
    } catch (error) {
      // Sandboxes are containers: a host without an engine has none to look for.
      this.status = engineAbsent(error)
        ? { available: false, absent: true, reason: 'no Docker engine on this host, so no sandboxes' }
        : { available: false, reason: `the Docker engine cannot be reached: ${dockerMessage(error)}` };
    }
    return this.status;
  }

  private async sandboxes(all = true): Promise<Sandbox[]> {
    if (!this.status.available && !(await this.probe()).available) {
      throw new FleetError('collector_unavailable', this.status.reason, {
        collector: 'sandbox',
        hint: 'Sandboxes are read through the local Docker engine.',
        ...(this.status.absent ? { details: { absent: true } } : {}),
      });
    }
    const containers = await this.options.docker.listContainers({ all, filters: { label: [this.label] } });
    return containers.map((container) => ({
      id: container.Labels[this.label] || containerName(container),
      container,
      runtimeDir: container.Labels[`${this.label}.runtime-dir`] || DEFAULT_RUNTIME_DIR,
    }));
  }

  private async find(sandboxId: string): Promise<Sandbox> {
    const found = (await this.sandboxes()).find((s) => s.id === sandboxId);
    if (!found) throw new FleetError('not_found', `no sandbox "${sandboxId}" on this host`, { hint: 'snapshot without sandbox_id lists the sandboxes.' });
    return found;
  }

  private mounts(sandbox: Sandbox): { source: string; destination: string }[] {
    return (sandbox.container.Mounts ?? []).filter((m) => m.Type === 'bind').map((m) => ({ source: m.Source, destination: m.Destination }));
  }

  private async telemetry(sandbox: Sandbox): Promise<Telemetry> {
    const base = `${sandbox.runtimeDir}/observability/observability.ndjson`;
    const target = { id: sandbox.container.Id, mounts: this.mounts(sandbox) };
    const [rotated, current] = await Promise.all([this.files.read(target, `${base}.1`), this.files.read(target, base)]);
    if (current === undefined && rotated === undefined) {
      throw new FleetError('not_found', `the sandbox has no telemetry log at ${base}`, {
        collector: 'sandbox',
        hint: 'Check the runtime dir label (fleetmesh.sandbox.runtime-dir) and that its daemon runs.',
      });
    }
    return parseTelemetry([rotated ?? '', current ?? '']);
  }

  private async manifest(sandbox: Sandbox): Promise<Manifest> {
    const path = `${sandbox.runtimeDir}/layerstack/manifest.json`;
    const text = await this.files.read({ id: sandbox.container.Id, mounts: this.mounts(sandbox) }, path);
    if (text === undefined) throw new FleetError('not_found', `the sandbox has no LayerStack manifest at ${path}`, { collector: 'sandbox' });
    try {
      return JSON.parse(text) as Manifest;
    } catch (error) {
      throw new FleetError('collector_failed', `the LayerStack manifest is not JSON: ${(error as Error).message}`, { collector: 'sandbox' });
    }
  }

  /** A fresh engine sample of the sandbox container, kept for deltas over the last 10 minutes. */
  private async engineSample(sandbox: Sandbox): Promise<EngineSample | undefined> {
    if (sandbox.container.State !== 'running') return undefined;
    const raw = (await this.options.docker.getContainer(sandbox.container.Id).stats({ stream: false, 'one-shot': true } as never)) as unknown as EngineStats;
    let read = 0;
    let write = 0;
    for (const entry of raw.blkio_stats?.io_service_bytes_recursive ?? []) {
      if (entry.op.toLowerCase() === 'read') read += entry.value;
      if (entry.op.toLowerCase() === 'write') write += entry.value;
    }
    const sample: EngineSample = {
      ts: Date.parse(raw.read) || Date.now(),
      metrics: {
        metrics_source: 'docker_engine',
        cpu_usec: Math.round(raw.cpu_stats.cpu_usage.total_usage / 1000),
        mem_cur: raw.memory_stats.usage ?? 0,
        mem_max: raw.memory_stats.limit ?? 0,
        io_rbytes: read,
        io_wbytes: write,
      },
    };
    const list = (this.history.get(sandbox.id) ?? []).filter((s) => sample.ts - s.ts <= HISTORY_MS);
    list.push(sample);
    this.history.set(sandbox.id, list);
    return sample;
  }

  private async node(sandbox: Sandbox) {
    const errors: { code: string; message: string }[] = [];
    const note = (error: unknown) => {
      const failure = error instanceof FleetError ? error : new FleetError('collector_failed', (error as Error).message);
      errors.push({ code: failure.code, message: failure.message });
    };
    const [telemetry, manifest, sample] = await Promise.all([
      this.telemetry(sandbox).catch((e) => void note(e)),
      this.manifest(sandbox).catch((e) => void note(e)),
      this.engineSample(sandbox).catch((e) => void note(e)),
    ]);
    const running = sandbox.container.State === 'running';
    if (!running) errors.push({ code: 'collector_unavailable', message: `the sandbox container is ${sandbox.container.State}` });
    const workspaces = new Map<string, { workspace_id: string; last_sample_unix_ms: number; metrics: Record<string, unknown> }>();
    for (const s of telemetry?.samples ?? []) {
      if (s.scope === 'sandbox' || s.scope === 'layerstack') continue;
      const current = workspaces.get(s.scope);
      if (!current || current.last_sample_unix_ms <= s.ts) workspaces.set(s.scope, { workspace_id: s.scope, last_sample_unix_ms: s.ts, metrics: s.metrics });
    }
    const held = telemetry ? leases(telemetry) : undefined;
    const layerBytes = manifest?.layers?.map((l) => l.bytes).filter((b): b is number => typeof b === 'number');
    const got = [telemetry, manifest].filter((x) => x !== undefined).length;
    return {
      sandbox_id: sandbox.id,
      lifecycle_state: lifecycle(sandbox.container.State),
      availability: (!running || got === 0 ? 'unavailable' : errors.length ? 'partial' : 'available') as 'available' | 'partial' | 'unavailable',
      sampled_at_unix_ms: Date.now(),
      errors,
      container: containerName(sandbox.container),
      daemon: { daemon_pid: null as number | null, runtime_dir: sandbox.runtimeDir },
      resources: {
        latest: sample ? { ts: sample.ts, ...sample.metrics } : null,
        history: (this.history.get(sandbox.id) ?? []).map((s) => ({ ts: s.ts, ...s.metrics })),
      },
      workspaces: [...workspaces.values()].sort((a, b) => a.workspace_id.localeCompare(b.workspace_id)),
      stack: {
        layer_count: manifest?.layers?.length ?? null,
        layers_bytes: layerBytes && layerBytes.length === manifest?.layers?.length ? layerBytes.reduce((a, b) => a + b, 0) : null,
        active_leases: held ? [...held.values()].reduce((sum, set) => sum + set.size, 0) : null,
      },
      telemetry: { records: telemetry?.records ?? 0, dropped_oversized: telemetry?.droppedOversized ?? 0, dropped_malformed: telemetry?.droppedMalformed ?? 0 },
    };
  }

  register(dispatcher: Dispatcher): void {
    dispatcher.register<typeof snapshot>('sandbox.snapshot', async (params) => {
      if (params.sandbox_id !== undefined) {
        const sandbox = await this.find(params.sandbox_id);
        const node = await withDeadline(this.node(sandbox), PER_SANDBOX_MS, `sandbox ${sandbox.id}`);
        // One sandbox's answer is its host's node: its errors are the call's, so the node reads partial.
        return {
          payload: node,
          errors: node.errors.map((e) => new FleetError(isErrorCode(e.code) ? e.code : 'collector_failed', e.message, { collector: 'sandbox' }).toInfo()),
        };
      }
      const ready = (await this.sandboxes()).filter((s) => s.container.State === 'running');
      const nodes = await mapLimited(ready, CONCURRENCY, async (sandbox) => {
        try {
          return await withDeadline(this.node(sandbox), PER_SANDBOX_MS, `sandbox ${sandbox.id}`);
        } catch (error) {
          // The same shape when it failed, so a fleet table stays whole.
          return {
            sandbox_id: sandbox.id,
            lifecycle_state: lifecycle(sandbox.container.State),
            availability: 'unavailable' as const,
            sampled_at_unix_ms: Date.now(),
            errors: [{ code: error instanceof FleetError ? error.code : 'collector_failed', message: (error as Error).message }],
            container: containerName(sandbox.container),
            daemon: { daemon_pid: null, runtime_dir: sandbox.runtimeDir },
            resources: { latest: null, history: [] },
            workspaces: [],
            stack: { layer_count: null, layers_bytes: null, active_leases: null },
            telemetry: { records: 0, dropped_oversized: 0, dropped_malformed: 0 },
          };
        }
      });
      return { payload: { sandboxes: nodes.sort((a, b) => a.sandbox_id.localeCompare(b.sandbox_id)) } };
    });

    dispatcher.register<typeof trace>('sandbox.trace', async (params) => {
      const telemetry = await this.telemetry(await this.find(params.sandbox_id));
      const forest = traceForest(telemetry, params.trace_id ?? 'last');
      return { payload: { view: 'trace', trace: forest.trace, spans: forest.spans } };
    });

    dispatcher.register<typeof events>('sandbox.events', async (params) => {
      const telemetry = await this.telemetry(await this.find(params.sandbox_id));
      let matched = telemetry.events
        .filter((e) => params.name === undefined || e.name === params.name)
        .filter((e) => params.since_ms === undefined || e.ts >= params.since_ms)
        .sort((a, b) => b.ts - a.ts);
      if (params.last_n !== undefined) matched = matched.slice(0, params.last_n);
      return { payload: { view: 'events', events: matched } };
    });

    dispatcher.register<typeof cgroup>('sandbox.cgroup', async (params) => {
      const sandbox = await this.find(params.sandbox_id);
      const scope = params.scope ?? 'sandbox';
      const since = Date.now() - (params.window_ms ?? 60_000);
      let samples: { ts: number; metrics: Record<string, unknown> }[];
      if (scope === 'sandbox') {
        await this.engineSample(sandbox);
        samples = (this.history.get(sandbox.id) ?? []).filter((s) => s.ts >= since);
      } else {
        samples = (await this.telemetry(sandbox)).samples.filter((s) => s.scope === scope && s.ts >= since).sort((a, b) => a.ts - b.ts);
      }
      const series = samples.map((sample, i) => {
        const previous = samples[i - 1];
        const deltas: Record<string, number> = {};
        if (previous) {
          for (const [key, value] of Object.entries(sample.metrics)) {
            const before = previous.metrics[key];
            if (typeof value === 'number' && typeof before === 'number' && !key.endsWith('_max')) deltas[key] = value - before;
          }
        }
        return { ts: sample.ts, sample_delta_ms: previous ? sample.ts - previous.ts : null, metrics: sample.metrics, deltas };
      });
      return { payload: { view: 'cgroup', scope, series } };
    });

    dispatcher.register<typeof layerstack>('sandbox.layerstack', async (params) => {
      const sandbox = await this.find(params.sandbox_id);
      const [manifest, telemetry] = await Promise.all([this.manifest(sandbox), this.telemetry(sandbox).catch(() => undefined)]);
      const held = telemetry ? leases(telemetry) : new Map<string, Set<string>>();
      if (params.workspace_id !== undefined) {
        const mounts = (manifest.layers ?? []).filter((l) => held.get(l.layer_id)?.has(params.workspace_id as string)).map((l) => l.layer_id);
        const latest = telemetry?.samples.filter((s) => s.scope === params.workspace_id).sort((a, b) => b.ts - a.ts)[0];
        const upper = latest?.metrics.upper_bytes;
        return { payload: { view: 'layerstack', workspace: params.workspace_id, mounts, upper_bytes: typeof upper === 'number' ? upper : null } };
      }
      const since = Date.now() - (params.window_ms ?? 60_000);
      const stackSamples = (telemetry?.samples ?? []).filter((s) => s.scope === 'layerstack').sort((a, b) => a.ts - b.ts);
      const latest = stackSamples.at(-1)?.metrics ?? {};
      const figure = (key: string) => (typeof latest[key] === 'number' ? (latest[key] as number) : null);
      const layers = (manifest.layers ?? []).map((layer) => ({
        layer_id: layer.layer_id,
        path: layer.path,
        bytes: typeof layer.bytes === 'number' ? layer.bytes : null,
        allocated_bytes: typeof layer.allocated_bytes === 'number' ? layer.allocated_bytes : null,
        leased_by_workspaces: held.get(layer.layer_id)?.size ?? 0,
        booked_by: [...(held.get(layer.layer_id) ?? [])].sort(),
      }));
      return {
        payload: {
          view: 'layerstack',
          manifest_version: typeof manifest.version === 'number' ? manifest.version : null,
          root_hash: typeof manifest.root_hash === 'string' ? manifest.root_hash : null,
          active_lease_count: layers.reduce((sum, l) => sum + l.leased_by_workspaces, 0),
          total_bytes: figure('total_bytes') ?? (layers.every((l) => l.bytes !== null) ? layers.reduce((sum, l) => sum + (l.bytes ?? 0), 0) : null),
          total_allocated_bytes: figure('total_allocated_bytes'),
          storage_logical_bytes: figure('storage_logical_bytes'),
          storage_allocated_bytes: figure('storage_allocated_bytes'),
          staging_entry_count: figure('staging_entry_count'),
          layers,
          trend: stackSamples.filter((s) => s.ts >= since).map((s) => ({ ts: s.ts, metrics: s.metrics })),
        },
      };
    });
  }
}
