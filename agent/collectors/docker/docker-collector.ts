import type { ContainerEvent } from '../../../shared/domains/docker/container-event.ts';
import { type ContainerInventory, INVENTORY_INTERVAL_MS } from '../../../shared/engine/records.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { ContainerFigures } from '../../../shared/wire/sample-codec.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { ContainerDirectory, containerName } from '../../engine/container-directory.ts';
import { engineUnavailable, unreachableEngine } from '../../engine/engine-access.ts';
import { dockerMessage, dockerStatus } from '../../engine/engine-errors.ts';
import { containerRecord, networkRecord, volumeRecord } from '../../engine/engine-records.ts';
import type { EngineStats } from '../../engine/engine-stats.ts';
import { EventFollower } from '../../engine/event-follower.ts';
import type { Collector, CollectorStatus, Report } from '../collector.ts';
import { ContainerChanges } from './container-changes.ts';
import { registerDockerChanges } from './docker-changes.ts';
import type { DockerApi, DockerEngine } from './docker-engine.ts';
import { registerDockerEvents } from './docker-events.ts';
import { registerDockerInspect } from './docker-inspect.ts';
import { registerDockerList } from './docker-list.ts';
import { registerDockerLogs } from './docker-logs.ts';
import { registerDockerStats } from './docker-stats.ts';
import { registerDockerTop } from './docker-top.ts';
import { figuresOf, StatsStreams } from './stats-streams.ts';

interface DockerCollectorOptions {
  docker: DockerApi;
  /** Where the engine is, for messages. */
  address: string;
  log: Logger;
  /** Re-probe this often, so an engine that comes or goes is noticed. */
  probeIntervalMs?: number;
  /** Called when availability changes (the agent re-announces itself). */
  onAvailabilityChange?: () => void;
  /** The label that marks sandbox containers, so the broker's index knows them. */
  sandboxLabel?: string;
  /** How often to sample every running container for the broker's metrics history (default a minute). */
  metricsIntervalMs?: number;
  /**
   * Reports for the broker's index: each container event as it happens (`container_event`), and the
   * host's containers and volumes at start, after changes and every inventoryIntervalMs (`container_inventory`).
   */
  report?: Report;
  inventoryIntervalMs?: number;
}

/**
 * homebutler's Docker tools against the local engine, with numbers instead of
 * strings, warm stats streams, demultiplexed logs, and the engine's events
 * followed for history and for the broker. When the engine cannot be reached
 * the collector is unavailable with the reason and every tool says so, while
 * the other collectors go on.
 */
export class DockerCollector implements Collector {
  readonly name = 'docker';
  private readonly directory: ContainerDirectory;
  /** Changes under way per container: one at a time, and state reads wait for them. */
  private readonly changes = new ContainerChanges();
  private readonly stats: StatsStreams;
  private readonly events: EventFollower;
  private status: CollectorStatus = { available: false, reason: 'not probed yet' };
  private version = '';
  private timer: NodeJS.Timeout | undefined;
  private counted: { running: number; total: number } | undefined;
  private inventoryTimer: NodeJS.Timeout | undefined;
  private metricsTimer: NodeJS.Timeout | undefined;
  /** The last one-shot counters of each container, to turn the next into a CPU share. */
  private readonly lastCounters = new Map<string, { cpu: number; system: number }>();
  private pendingSamples: ContainerFigures[] = [];
  private inventoryDebounce: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: DockerCollectorOptions) {
    this.directory = new ContainerDirectory(options.docker);
    this.stats = new StatsStreams(options.docker);
    this.events = new EventFollower(options.docker, ['container'], (event) => this.onEvent(event), options.log);
  }

  async start(): Promise<void> {
    await this.probe();
    this.events.start();
    this.timer = setInterval(() => {
      const before = this.status.available;
      void this.probe().then((status) => {
        if (status.available !== before) this.options.onAvailabilityChange?.();
      });
    }, this.options.probeIntervalMs ?? 15_000);
    this.timer.unref();
    this.metricsTimer = setInterval(() => void this.sampleContainers(), this.options.metricsIntervalMs ?? 60_000);
    this.metricsTimer.unref();
    void this.sampleContainers();
    if (this.options.report) {
      this.inventoryTimer = setInterval(() => void this.reportInventory(), this.options.inventoryIntervalMs ?? INVENTORY_INTERVAL_MS);
      this.inventoryTimer.unref();
      void this.reportInventory();
    }
  }

  onConnected(): void {
    void this.reportInventory();
  }

  /** Sends the host's containers, volumes and local networks to the broker (nothing while the engine is away). */
  private async reportInventory(): Promise<void> {
    const report = this.options.report;
    if (!this.status.available || !report) return;
    try {
      const [containers, volumes, networks] = await Promise.all([
        this.directory.list(true),
        this.options.docker.listVolumes(),
        this.options.docker.listNetworks(),
      ]);
      // Cached inspect facts, refreshed by engine events: describe then counts restarts as docker_list does.
      // The containers not inspected yet (an agent's first inventory) go up at once without them, and again once inspected.
      const ids = containers.map((c) => c.Id);
      const details = this.directory.cached(ids);
      if (details.size < ids.length) {
        void this.directory.detailsOf(ids).then((inspected) => {
          if (inspected.size > details.size) this.inventorySoon();
        });
      }
      const inventory: ContainerInventory = {
        taken_unix_ms: Date.now(),
        containers: containers.map((c) => containerRecord(c, this.options.sandboxLabel, details.get(c.Id)?.restartCount)),
        volumes: (volumes.Volumes ?? []).map(volumeRecord),
        // A swarm's networks are its manager's to report, once for the whole swarm.
        networks: (networks as { Scope?: string }[]).filter((n) => (n.Scope ?? 'local') === 'local').map(networkRecord),
      };
      report('container_inventory', inventory);
    } catch (error) {
      this.options.log.debug('container inventory failed', { error: (error as Error).message });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearInterval(this.inventoryTimer);
    clearInterval(this.metricsTimer);
    clearTimeout(this.inventoryDebounce);
    this.stats.stop();
    await this.events.stop();
  }

  async probe(): Promise<CollectorStatus> {
    try {
      const version = await this.options.docker.version();
      this.version = version.Version;
      this.status = { available: true, reason: '' };
    } catch (error) {
      this.status = unreachableEngine(error, this.options.address);
    }
    return this.status;
  }

  facts(): Record<string, string | number | boolean> {
    return this.version ? { docker_version: this.version } : {};
  }

  private onEvent(event: ContainerEvent): void {
    if (event.action === 'destroy') this.directory.forget(event.id);
    else if (
      ['start', 'die', 'restart', 'stop', 'kill', 'oom', 'rename', 'pause', 'unpause'].includes(event.action) ||
      event.action.startsWith('health_status')
    ) {
      void this.directory.refresh(event.id).catch(() => undefined);
    }
    this.options.report?.('container_event', event);
    this.inventorySoon();
  }

  /**
   * One inventory at most a second after the first unsent change: postponing it on every event would let a
   * container in a crash loop on the host keep every other change from the broker.
   */
  private inventorySoon(): void {
    if (this.options.report && !this.inventoryDebounce && !this.stopped) {
      this.inventoryDebounce = setTimeout(() => {
        this.inventoryDebounce = undefined;
        void this.reportInventory();
      }, 1000);
      this.inventoryDebounce.unref();
    }
  }

  private unavailable(): FleetError {
    return engineUnavailable(this.status, 'docker');
  }

  /** Runs an engine request, turning an unreachable engine into collector_unavailable (and noticing it). */
  private async engine<T>(work: () => Promise<T>): Promise<T> {
    if (!this.status.available && !(await this.probe()).available) throw this.unavailable();
    try {
      return await work();
    } catch (error) {
      if (error instanceof FleetError) throw error;
      if (dockerStatus(error) === undefined && !(await this.probe()).available) {
        this.options.onAvailabilityChange?.();
        throw this.unavailable();
      }
      throw new FleetError('collector_failed', `the Docker engine refused: ${dockerMessage(error)}`, {
        collector: 'docker',
        hint: "The engine's words are in the message.",
      });
    }
  }

  /**
   * One sample of every running container for the metrics history: the warm
   * stats stream's figures when there is one, else a one-shot read (the engine
   * answers those at once; CPU is the share since the previous one-shot).
   */
  private async sampleContainers(): Promise<void> {
    if (!this.status.available) return;
    try {
      const running = await this.directory.list(false);
      const warm = this.stats.latest();
      const samples = await Promise.all(
        running.map(async (container): Promise<ContainerFigures | undefined> => {
          const base = { id: container.Id.slice(0, 12), name: containerName(container), service: container.Labels['com.docker.swarm.service.name'] ?? null };
          const hot = warm.get(container.Id);
          if (hot)
            return {
              ...base,
              cpu_percent: hot.cpu_percent,
              memory_usage_bytes: hot.memory_usage_bytes,
              net_rx_bytes: hot.net_rx_bytes,
              net_tx_bytes: hot.net_tx_bytes,
            };
          try {
            const raw = (await this.options.docker.getContainer(container.Id).stats({ stream: false, 'one-shot': true } as never)) as unknown as EngineStats;
            const figures = figuresOf(raw);
            const cpu = raw.cpu_stats.cpu_usage.total_usage;
            const system = raw.cpu_stats.system_cpu_usage ?? 0;
            const previous = this.lastCounters.get(container.Id);
            this.lastCounters.set(container.Id, { cpu, system });
            const cores = raw.cpu_stats.online_cpus ?? 1;
            const share = previous && system > previous.system ? Math.round(((cpu - previous.cpu) / (system - previous.system)) * cores * 10_000) / 100 : null;
            return {
              ...base,
              cpu_percent: share,
              memory_usage_bytes: figures.memory_usage_bytes,
              net_rx_bytes: figures.net_rx_bytes,
              net_tx_bytes: figures.net_tx_bytes,
            };
          } catch {
            return undefined;
          }
        }),
      );
      this.pendingSamples = samples.filter((s): s is ContainerFigures => s !== undefined);
      const live = new Set(running.map((c) => c.Id));
      for (const id of this.lastCounters.keys()) if (!live.has(id)) this.lastCounters.delete(id);
    } catch (error) {
      this.options.log.debug('container sampling failed', { error: (error as Error).message });
    }
  }

  /** The container samples not yet sent (each batch goes out with one heartbeat). */
  takeContainerSamples(): ContainerFigures[] {
    const samples = this.pendingSamples;
    this.pendingSamples = [];
    return samples;
  }

  private async counts(): Promise<{ running: number; total: number }> {
    if (!this.status.available) throw this.unavailable();
    const containers = await this.directory.list(true);
    this.counted = { running: containers.filter((c) => c.State === 'running').length, total: containers.length };
    return this.counted;
  }

  /** The container counts for a heartbeat: the last known, refreshed in the background; null when Docker is not there. */
  lastCounts(): { containers_running: number | null; containers_total: number | null } {
    if (this.status.available) void this.counts().catch(() => undefined);
    else this.counted = undefined;
    return { containers_running: this.counted?.running ?? null, containers_total: this.counted?.total ?? null };
  }

  register(dispatcher: Dispatcher): void {
    const engine: DockerEngine = {
      docker: this.options.docker,
      directory: this.directory,
      changes: this.changes,
      stats: this.stats,
      events: this.events,
      run: (work) => this.engine(work),
    };
    registerDockerList(dispatcher, engine);
    registerDockerStats(dispatcher, engine);
    registerDockerLogs(dispatcher, engine);
    registerDockerTop(dispatcher, engine);
    registerDockerInspect(dispatcher, engine);
    registerDockerChanges(dispatcher, engine);
    registerDockerEvents(dispatcher, engine);
  }
}
