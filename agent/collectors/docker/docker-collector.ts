import type { Readable } from 'node:stream';
import type { ContainerInfo, ContainerInspectInfo } from 'dockerode';
import type { ContainerEvent } from '../../../shared/domains/docker/container-event.ts';
import {
  dockerEvents,
  dockerInspect,
  dockerList,
  dockerLogs,
  dockerRestart,
  dockerStart,
  dockerStats,
  dockerStop,
  dockerTop,
} from '../../../shared/domains/docker/docker-actions.ts';
import type { ContainerInventory } from '../../../shared/domains/swarm/records.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { ContainerFigures } from '../../../shared/wire/sample-codec.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { containerRecord, volumeRecord } from '../swarm/engine-records.ts';
import type { ContainerFacts } from '../system/system-collector.ts';
import { ContainerChanges } from './container-changes.ts';
import { ContainerDirectory, containerName } from './container-directory.ts';
import { type DockerApi, dockerMessage, dockerStatus, unixMs } from './docker-api.ts';
import { EventFollower } from './event-follower.ts';
import { LineCollector, LogDemultiplexer, toUnixSeconds } from './log-reader.ts';
import { type EngineStats, figuresOf, StatsStreams } from './stats-streams.ts';

export interface DockerCollectorOptions {
  docker: DockerApi;
  /** Where the engine is, for messages. */
  address: string;
  log: Logger;
  /** Container events worth telling the broker about. */
  onEvent?: (event: ContainerEvent) => void;
  /** Re-probe this often, so an engine that comes or goes is noticed. */
  probeIntervalMs?: number;
  /** Called when availability changes (the agent re-announces itself). */
  onAvailabilityChange?: () => void;
  /** The label that marks sandbox containers, so the broker's index knows them. */
  sandboxLabel?: string;
  /** How often to sample every running container for the broker's metrics history (default a minute). */
  metricsIntervalMs?: number;
  /** The host's containers and volumes, for the broker's index: at start, after changes, and every inventoryIntervalMs. */
  onInventory?: (inventory: ContainerInventory) => void;
  inventoryIntervalMs?: number;
}

function ports(info: ContainerInfo) {
  return info.Ports.map((p) => ({ private_port: p.PrivatePort, public_port: p.PublicPort ?? null, protocol: p.Type, ip: p.IP ?? null })).sort(
    (a, b) => a.private_port - b.private_port || (a.public_port ?? 0) - (b.public_port ?? 0) || (a.ip ?? '').localeCompare(b.ip ?? ''),
  );
}

function stateOf(info: ContainerInspectInfo, changed: boolean) {
  return {
    id: info.Id.slice(0, 12),
    name: info.Name.replace(/^\//, ''),
    state: info.State.Status,
    running: info.State.Running,
    started_at_unix_ms: unixMs(info.State.StartedAt),
    finished_at_unix_ms: unixMs(info.State.FinishedAt),
    exit_code: info.State.ExitCode,
    restart_count: info.RestartCount,
    changed,
  };
}

/**
 * homebutler's Docker tools against the local engine, with numbers instead of
 * strings, warm stats streams, demultiplexed logs, and the engine's events
 * followed for history and for the broker. When the engine cannot be reached
 * the collector is unavailable with the reason and every tool says so, while
 * the other collectors go on.
 */
export class DockerCollector implements Collector, ContainerFacts {
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
    if (this.options.onInventory) {
      this.inventoryTimer = setInterval(() => void this.reportInventory(), this.options.inventoryIntervalMs ?? 30_000);
      this.inventoryTimer.unref();
      void this.reportInventory();
    }
  }

  onConnected(): void {
    void this.reportInventory();
  }

  /** Sends the host's containers and volumes to the broker (nothing while the engine is away). */
  private async reportInventory(): Promise<void> {
    if (!this.status.available || !this.options.onInventory) return;
    try {
      const [containers, volumes] = await Promise.all([this.directory.list(true), this.options.docker.listVolumes()]);
      this.options.onInventory({
        taken_unix_ms: Date.now(),
        containers: containers.map((c) => containerRecord(c, this.options.sandboxLabel)),
        volumes: (volumes.Volumes ?? []).map(volumeRecord),
      });
    } catch (error) {
      this.options.log.debug('container inventory failed', { error: (error as Error).message });
    }
  }

  async stop(): Promise<void> {
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
      this.status = { available: false, reason: `the Docker engine at ${this.options.address} cannot be reached: ${dockerMessage(error)}` };
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
    this.options.onEvent?.(event);
    if (this.options.onInventory) {
      clearTimeout(this.inventoryDebounce);
      this.inventoryDebounce = setTimeout(() => void this.reportInventory(), 1000);
      this.inventoryDebounce.unref();
    }
  }

  private unavailable(): FleetError {
    return new FleetError('collector_unavailable', this.status.reason || 'the Docker engine cannot be reached', {
      collector: 'docker',
      hint: 'Check that Docker runs on that host and that the agent can use its socket (--docker-socket, DOCKER_HOST, or the docker group).',
    });
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

  // ContainerFacts, for the system collector and heartbeats.
  async counts(): Promise<{ running: number; total: number }> {
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

  async publishedPorts(): Promise<Map<string, string>> {
    if (!this.status.available) throw this.unavailable();
    const map = new Map<string, string>();
    for (const container of await this.directory.list(false)) {
      for (const port of container.Ports) if (port.PublicPort) map.set(`${port.Type}:${port.PublicPort}`, containerName(container));
    }
    return map;
  }

  register(dispatcher: Dispatcher): void {
    dispatcher.register(dockerList, (params) =>
      this.engine(async () => {
        let containers = await this.directory.list(params.all ?? true);
        if (params.name) containers = containers.filter((c) => containerName(c).includes(params.name as string));
        if (params.label) {
          const [key, value] = params.label.split('=', 2) as [string, string | undefined];
          containers = containers.filter((c) => Object.hasOwn(c.Labels, key) && (value === undefined || c.Labels[key] === value));
        }
        const details = await this.directory.detailsOf(containers.map((c) => c.Id));
        const rows = containers
          .map((c) => {
            const detail = details.get(c.Id);
            return {
              id: c.Id.slice(0, 12),
              name: containerName(c),
              image: c.Image,
              state: c.State,
              status: c.Status,
              created_unix_ms: c.Created * 1000,
              started_at_unix_ms: unixMs(detail?.startedAt),
              ports: ports(c),
              health: detail?.health ?? null,
              restart_count: detail?.restartCount ?? 0,
              labels: c.Labels,
            };
          })
          .sort((a, b) => a.name.localeCompare(b.name));
        return { payload: { containers: rows, count: rows.length } };
      }),
    );

    dispatcher.register(dockerStats, (params) =>
      this.engine(async () => {
        let running = await this.directory.list(false);
        if (params.name) running = running.filter((c) => containerName(c).includes(params.name as string));
        const figures = await this.stats.figures(
          running.map((c) => c.Id),
          3000,
        );
        const rows = running
          .filter((c) => figures.has(c.Id))
          .map((c) => {
            const { sampled_at_unix_ms: _at, ...values } = figures.get(c.Id) as NonNullable<ReturnType<typeof figures.get>>;
            return { id: c.Id.slice(0, 12), name: containerName(c), ...values };
          })
          .sort((a, b) => a.name.localeCompare(b.name));
        const missing = running.filter((c) => !figures.has(c.Id)).map(containerName);
        return {
          payload: { containers: rows, count: rows.length },
          errors: missing.length
            ? [
                new FleetError('collector_failed', `no stats yet for ${missing.join(', ')}`, {
                  collector: 'docker',
                  hint: 'Ask again in a second; the streams are warming.',
                }).toInfo(),
              ]
            : [],
        };
      }),
    );

    dispatcher.register(dockerLogs, (params, context) =>
      this.engine(async () => {
        const container = await this.directory.resolve(params.name);
        const info = await this.directory.refresh(container.Id);
        const multiplexed = !(info?.Config.Tty ?? false);
        const maxLines = params.lines ?? 50;
        const collector = new LineCollector({ timestamps: params.timestamps ?? false, contains: params.contains, stream: params.stream ?? 'both', maxLines });
        const demux = new LogDemultiplexer(multiplexed);
        const since = params.since === undefined ? undefined : Math.floor(toUnixSeconds(params.since, 'since'));
        const until = params.until === undefined ? undefined : Math.ceil(toUnixSeconds(params.until, 'until'));
        const handle = this.options.docker.getContainer(container.Id);
        const raw = (await handle.logs({
          follow: false,
          stdout: params.stream !== 'stderr',
          stderr: params.stream !== 'stdout',
          timestamps: true,
          // With a text filter, read the most the tool allows and keep the last matches.
          tail: params.contains ? 5000 : maxLines,
          ...(since !== undefined ? { since } : {}),
          ...(until !== undefined ? { until } : {}),
        })) as unknown as Buffer;
        for (const line of [...demux.push(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw))), ...demux.flush()]) collector.add(line.stream, line.raw);
        const followMs = params.follow_ms ?? 0;
        if (followMs > 0 && until === undefined) {
          const stream = (await handle.logs({
            follow: true,
            stdout: params.stream !== 'stderr',
            stderr: params.stream !== 'stdout',
            timestamps: true,
            since: Math.floor(Date.now() / 1000),
          })) as unknown as Readable;
          const live = new LogDemultiplexer(multiplexed);
          await new Promise<void>((resolve) => {
            const finish = () => {
              clearTimeout(timer);
              context.signal.removeEventListener('abort', finish);
              stream.destroy();
              resolve();
            };
            const timer = setTimeout(finish, Math.min(followMs, Math.max(0, context.deadlineUnixMs - Date.now() - 250)));
            context.signal.addEventListener('abort', finish, { once: true });
            stream.on('data', (chunk: Buffer) => {
              const fresh = live.push(chunk).flatMap((line) => collector.add(line.stream, line.raw) ?? []);
              if (fresh.length) context.emit({ container: containerName(container), lines: fresh });
            });
            stream.on('end', finish);
            stream.on('error', finish);
          });
        }
        return {
          payload: {
            container: containerName(container),
            lines: collector.lines,
            count: collector.lines.length,
            truncated: collector.truncatedReason !== undefined,
            ...(collector.truncatedReason ? { truncated_reason: collector.truncatedReason } : {}),
          },
        };
      }),
    );

    dispatcher.register(dockerTop, (params) =>
      this.engine(async () => {
        const container = await this.directory.resolve(params.name);
        if (container.State !== 'running') {
          throw new FleetError('conflict', `container "${params.name}" is ${container.State}, not running`, { hint: 'docker_start starts it.' });
        }
        const top = (await this.options.docker.getContainer(container.Id).top()) as { Titles: string[]; Processes: string[][] };
        const titles = top.Titles.map((t) =>
          t
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '_')
            .replace(/^_|_$/g, ''),
        );
        return {
          payload: {
            container: containerName(container),
            titles,
            processes: top.Processes.map((row) => Object.fromEntries(titles.map((title, i) => [title, row[i] ?? '']))),
          },
        };
      }),
    );

    dispatcher.register(dockerInspect, (params) =>
      this.engine(async () => {
        await this.changes.settled((await this.directory.resolve(params.name)).Id);
        const info = await this.directory.inspect(params.name);
        const exposed = info.NetworkSettings.Ports ?? {};
        const portRows = Object.entries(exposed).flatMap(([spec, bindings]) => {
          const [port, protocol] = spec.split('/') as [string, string];
          const list = bindings?.length ? bindings : [null];
          return list.map((binding) => ({
            private_port: Number(port),
            public_port: binding?.HostPort ? Number(binding.HostPort) : null,
            protocol: protocol ?? 'tcp',
            ip: binding?.HostIp || null,
          }));
        });
        return {
          payload: {
            id: info.Id.slice(0, 12),
            name: info.Name.replace(/^\//, ''),
            image: info.Config.Image,
            image_id: info.Image,
            created_unix_ms: unixMs(info.Created) ?? 0,
            state: {
              status: info.State.Status,
              running: info.State.Running,
              exit_code: info.State.ExitCode,
              oom_killed: info.State.OOMKilled,
              started_at_unix_ms: unixMs(info.State.StartedAt),
              finished_at_unix_ms: unixMs(info.State.FinishedAt),
              restart_count: info.RestartCount,
              error: info.State.Error ?? '',
            },
            health: info.State.Health
              ? {
                  status: info.State.Health.Status,
                  failing_streak: info.State.Health.FailingStreak,
                  last_output: info.State.Health.Log?.at(-1)?.Output?.slice(0, 2000) ?? null,
                }
              : null,
            restart_policy: { name: info.HostConfig.RestartPolicy?.Name || 'no', maximum_retry_count: info.HostConfig.RestartPolicy?.MaximumRetryCount ?? 0 },
            ports: portRows,
            mounts: info.Mounts.map((m) => ({ type: m.Type ?? 'bind', source: m.Source, destination: m.Destination, mode: m.Mode, rw: m.RW })),
            networks: Object.entries(info.NetworkSettings.Networks ?? {}).map(([name, n]) => ({ name, ip_address: n.IPAddress, gateway: n.Gateway })),
            command: [info.Path, ...info.Args].filter((part) => part !== ''),
            entrypoint: Array.isArray(info.Config.Entrypoint) ? info.Config.Entrypoint : info.Config.Entrypoint ? [info.Config.Entrypoint] : [],
            labels: info.Config.Labels ?? {},
            env_names: (info.Config.Env ?? []).map((entry) => entry.slice(0, entry.indexOf('=') >= 0 ? entry.indexOf('=') : entry.length)).sort(),
          },
        };
      }),
    );

    const change = (verb: 'start' | 'restart' | 'stop') => async (params: { name: string; timeout_s?: number }) =>
      this.engine(async () => {
        const container = await this.directory.resolve(params.name);
        const handle = this.options.docker.getContainer(container.Id);
        return this.changes.run(container.Id, async () => {
          let changed = true;
          try {
            if (verb === 'start') await handle.start();
            else if (verb === 'restart') await handle.restart({ t: params.timeout_s ?? 10 });
            else await handle.stop({ t: params.timeout_s ?? 10 });
          } catch (error) {
            // 304: already in the requested state.
            if (dockerStatus(error) === 304) changed = false;
            else throw new FleetError('collector_failed', `the engine could not ${verb} "${params.name}": ${dockerMessage(error)}`, { collector: 'docker' });
          }
          const info = await this.directory.refresh(container.Id);
          if (!info) throw new FleetError('not_found', `container "${params.name}" is gone`);
          return { payload: stateOf(info, changed) };
        });
      });
    dispatcher.register(dockerStart, change('start'));
    dispatcher.register(dockerRestart, change('restart'));
    dispatcher.register(dockerStop, change('stop'));

    dispatcher.register(dockerEvents, (params) =>
      this.engine(async () => {
        const events = this.events.recent({
          ...(params.since_unix_ms !== undefined ? { sinceUnixMs: params.since_unix_ms } : {}),
          ...(params.types ? { types: params.types } : {}),
          ...(params.name ? { name: params.name } : {}),
          limit: params.limit ?? 100,
        });
        const rows = events.map(({ type: _type, attributes: _attributes, ...event }) => event);
        return { payload: { events: rows, count: rows.length } };
      }),
    );
  }
}
