import type { getClusterStatus, getEvents, getLogs, getTopology, watchService } from '../../../shared/domains/swarm/swarm-actions.ts';
import type { SwarmSnapshot } from '../../../shared/engine/records.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { dockerMessage, engineAbsent } from '../../engine/engine-errors.ts';
import { toUnixSeconds } from '../../engine/engine-time.ts';
import { type EngineEvent, EventFollower } from '../../engine/event-follower.ts';
import type { Collector, CollectorStatus, Report } from '../collector.ts';
import { clusterStatus } from './cluster-status.ts';
import { SwarmEngine } from './swarm-engine.ts';
import { readSwarmLogs } from './swarm-logs.ts';
import { registerSwarmMutations, waitForConvergence } from './swarm-mutations.ts';
import { SwarmReader } from './swarm-reader.ts';
import { topology } from './topology.ts';

interface SwarmCollectorOptions {
  /** The engine's swarm endpoints are called through its modem; its events say when to report afresh. */
  docker: Pick<EngineClient, 'modem' | 'getEvents'>;
  log: Logger;
  /** The name the operator gave this swarm (--swarm-name); the swarm id when empty. */
  clusterName: string;
  /** Reports for the broker's index: a fresh view of the swarm (`swarm_snapshot`). */
  report?: Report;
  onAvailabilityChange?: () => void;
  snapshotIntervalMs?: number;
}

/** A container event of a swarm task, as get_events names it: type task, named service.slot. */
function asTaskEvent(event: EngineEvent): { type: string; name: string } | undefined {
  const task = event.attributes['com.docker.swarm.task.name'];
  if (!task) return undefined;
  // com.docker.swarm.task.name is service.slot.taskid: drop the id.
  return { type: 'task', name: task.replace(/\.[a-z0-9]{25}$/, '') };
}

/**
 * Cetacean's Swarm tools, served by agents whose engine is a swarm manager.
 * The broker routes every swarm call to one healthy manager of the right swarm;
 * this collector reads the swarm through its engine's API, changes it with
 * Swarm's version index (a concurrent change is a conflict, never an
 * overwrite), and reports snapshots for the broker's index.
 */
export class SwarmCollector implements Collector {
  readonly name = 'swarm';
  private readonly engine: SwarmEngine;
  private readonly reader: SwarmReader;
  private readonly events: EventFollower;
  private status: CollectorStatus = { available: false, reason: 'not probed yet' };
  private facts_: Record<string, string> = {};
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;

  constructor(private readonly options: SwarmCollectorOptions) {
    this.engine = new SwarmEngine(options.docker);
    this.reader = new SwarmReader(this.engine, () => this.options.clusterName || this.facts_.swarm_id || '');
    this.events = new EventFollower(options.docker, ['service', 'node', 'secret', 'config', 'network', 'container'], () => this.changed(), options.log);
  }

  async start(): Promise<void> {
    await this.probe();
    this.events.start();
    this.timer = setInterval(() => {
      const before = this.status.available;
      void this.probe().then((status) => {
        if (status.available !== before) this.options.onAvailabilityChange?.();
        if (status.available) void this.report();
      });
    }, this.options.snapshotIntervalMs ?? 15_000);
    this.timer.unref();
    if (this.status.available) void this.report();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    await this.events.stop();
  }

  async probe(): Promise<CollectorStatus> {
    try {
      const info = await this.engine.request('GET', '/info');
      const swarm = info.Swarm ?? {};
      const active = swarm.LocalNodeState === 'active';
      this.facts_ = active
        ? {
            swarm_role: swarm.ControlAvailable ? 'manager' : 'worker',
            swarm_id: swarm.Cluster?.ID ?? '',
            swarm_node_id: swarm.NodeID ?? '',
            ...(this.options.clusterName ? { swarm_name: this.options.clusterName } : {}),
          }
        : {};
      // Not in a swarm, or a worker: there is no swarm to serve from here, which is no failure.
      this.status = !active
        ? { available: false, absent: true, reason: 'this engine is not part of a swarm' }
        : swarm.ControlAvailable
          ? { available: true, reason: '' }
          : { available: false, absent: true, reason: 'this engine is a swarm worker; swarm tools are served by the agents on managers' };
    } catch (error) {
      this.facts_ = {};
      this.status = engineAbsent(error)
        ? { available: false, absent: true, reason: 'no Docker engine on this host, so no swarm' }
        : { available: false, reason: `the Docker engine cannot be reached: ${dockerMessage(error)}` };
    }
    return this.status;
  }

  facts(): Record<string, string | number | boolean> {
    return this.facts_;
  }

  onConnected(): void {
    if (this.status.available) void this.report();
  }

  /** Something changed in the swarm: report a fresh snapshot soon (coalescing bursts). */
  private changed(): void {
    if (!this.status.available) return;
    this.reader.invalidate();
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.report(), 1000);
    this.debounce.unref();
  }

  private async report(): Promise<void> {
    try {
      const snapshot: SwarmSnapshot = await this.reader.snapshot(true);
      this.options.report?.('swarm_snapshot', snapshot);
    } catch (error) {
      this.options.log.debug('swarm snapshot failed', { error: (error as Error).message });
    }
  }

  private async snapshot(): Promise<SwarmSnapshot> {
    if (!this.status.available && !(await this.probe()).available) {
      throw new FleetError('collector_unavailable', this.status.reason, {
        collector: 'swarm',
        hint: 'Swarm tools are served by agents on manager nodes.',
        ...(this.status.absent ? { details: { absent: true } } : {}),
      });
    }
    return this.reader.snapshot();
  }

  register(dispatcher: Dispatcher): void {
    dispatcher.register<typeof getClusterStatus>('swarm.cluster_status', async () => ({ payload: clusterStatus(await this.snapshot()) }));
    dispatcher.register<typeof getTopology>('swarm.topology', async (params) => ({ payload: topology(await this.snapshot(), params.view, params.node) }));
    dispatcher.register<typeof getLogs>('swarm.logs', async (params, context) => {
      const snapshot = await this.snapshot();
      const request = { ...params, ...(params.cluster !== undefined ? { cluster: params.cluster } : {}) };
      return { payload: await readSwarmLogs(this.engine, snapshot, request, context.signal) };
    });
    dispatcher.register<typeof getEvents>('swarm.events', async (params) => {
      const snapshot = await this.snapshot();
      const since = params.since === undefined ? 0 : toUnixSeconds(params.since, 'since') * 1000;
      const until = params.until === undefined ? Number.POSITIVE_INFINITY : toUnixSeconds(params.until, 'until') * 1000;
      const types = params.types ? new Set<string>(params.types) : undefined;
      const wanted = params.resource;
      const service = wanted ? snapshot.services.find((s) => s.id === wanted || s.name === wanted) : undefined;
      const rows = this.events
        .recent({ limit: 1000 })
        .map((event) => {
          const task = event.type === 'container' ? asTaskEvent(event) : undefined;
          if (event.type === 'container' && !task) return undefined;
          const detail =
            event.exit_code !== undefined
              ? `exit code ${event.exit_code}`
              : event.attributes['updatestate.new']
                ? `update ${event.attributes['updatestate.new']}`
                : undefined;
          return {
            time_unix_ms: event.time_unix_ms,
            type: task?.type ?? event.type,
            action: event.action,
            id: event.id,
            name: task?.name ?? event.name,
            ...(detail ? { detail } : {}),
          };
        })
        .filter((row): row is NonNullable<typeof row> => row !== undefined)
        .filter((row) => row.time_unix_ms >= since && row.time_unix_ms <= until)
        .filter((row) => !types || types.has(row.type))
        .filter((row) => {
          if (!wanted) return true;
          if (row.id === wanted || row.name === wanted) return true;
          // A service's timeline includes its tasks' entries.
          return service !== undefined && row.type === 'task' && row.name.startsWith(`${service.name}.`);
        })
        .sort((a, b) => b.time_unix_ms - a.time_unix_ms)
        .slice(0, params.limit ?? 100);
      return { payload: { events: rows, count: rows.length } };
    });
    dispatcher.register<typeof watchService>('swarm.watch', async (params, context) => {
      const snapshot = await this.snapshot();
      const service = snapshot.services.find((s) => s.id === params.service || s.name === params.service);
      if (!service) throw new FleetError('not_found', `no service "${params.service}" in this swarm`, { hint: 'find with type service lists them.' });
      const result = await waitForConvergence(this.tools(), service.id, (params.timeout ?? 60) * 1000, context);
      return {
        payload: {
          service: result.summary,
          converged: result.summary.converged,
          waited_s: result.waitedS,
          ...(result.reason ? { reason: result.reason } : {}),
        },
      };
    });
    registerSwarmMutations(dispatcher, this.tools());
  }

  private tools() {
    return { engine: this.engine, reader: this.reader, localNodeId: () => this.facts_.swarm_node_id ?? '', localRole: () => this.facts_.swarm_role ?? '' };
  }
}
