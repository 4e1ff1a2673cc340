import { loadavg, uptime } from 'node:os';
import type { alerts, alertsHistory, openPorts, processes, setAlertThresholds, systemStatus } from '../../../shared/domains/system/system-actions.ts';
import { PROCESS_CPU_WINDOW_MS } from '../../../shared/domains/system/system-head.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { LocalCalls } from '../../dispatcher/local-calls.ts';
import type { ContainerFacts } from '../../engine/container-facts.ts';
import { engineAbsent } from '../../engine/engine-errors.ts';
import type { SystemSampler } from '../../sampler/system-sampler.ts';
import type { Collector, CollectorStatus, Report } from '../collector.ts';
import { AlertRecorder, readings, type Thresholds } from './alert-recorder.ts';
import { AlertThresholds } from './alert-thresholds.ts';
import { HostProcesses, type ProcessTable } from './host-processes.ts';
import { type ListeningSocket, readHostSockets, type SocketTable } from './host-sockets.ts';
import type { ProcFiles } from './proc-files.ts';
import type { SystemInfo } from './system-info.ts';

interface SystemCollectorOptions {
  sampler: SystemSampler;
  si: SystemInfo;
  thresholds: Thresholds;
  dataDir: string | undefined;
  /** What it asks of Docker (container counts, who publishes a port, whose a process is); absent or failing is fine. */
  containers?: Pick<ContainerFacts, 'counts' | 'publishedPorts' | 'namesById'>;
  /**
   * The host's /proc mounted into the agent's container: processes, listening
   * sockets and their owners are read there. Undefined: systeminformation on
   * the agent's own /proc (an agent running on the host itself).
   */
  hostProc?: string | undefined;
  /**
   * The agent's own /proc, for an agent on the host itself (Linux): processes
   * and listening sockets are read there as from a host /proc, rather than
   * through systeminformation, whose CPU shares count since its previous call.
   */
  ownProc?: string | undefined;
  /** How long the CPU share of each process is measured over (default PROCESS_CPU_WINDOW_MS; a test shortens it). */
  cpuWindowMs?: number;
  /** How the host's /proc is read (a test's fake refuses what the kernel would). */
  procFiles?: ProcFiles;
  /**
   * The agent runs in a container with a pid namespace of its own and no host
   * /proc: processes and open_ports refuse rather than describe the container.
   */
  containerOnly?: boolean;
  /** Sends each alert crossing to the broker as an `alert_crossing` report. */
  report?: Report;
}

/** Why the host's /proc gave less than everything, as the answer's errors. */
function hostProcFailure(message: string, hint: string) {
  return new FleetError('collector_failed', message, { collector: 'system', hint }).toInfo();
}

/** What the agent needs to see other processes' open files, for a hint. */
const OWNER_HINT =
  "Run the agent as root with the SYS_PTRACE and DAC_OVERRIDE capabilities (docker-compose.yml and the Helm chart grant them); on a host where AppArmor confines containers, the agent's container must also be unconfined.";

const STATIC_TTL_MS = 60 * 60_000;

type ProcessRow = ProcessTable['list'][number];

function toProcess(p: ProcessRow, containers: ReadonlyMap<string, string>) {
  return {
    pid: p.pid,
    name: p.name,
    user: p.user,
    state: p.state,
    cpu_percent: Math.round(p.cpu * 10) / 10,
    mem_percent: Math.round(p.mem * 10) / 10,
    rss_bytes: p.memRss * 1024,
    // A container gone since the reading, or Docker not answering, leaves its short id.
    container: p.containerId ? (containers.get(p.containerId) ?? p.containerId.slice(0, 12)) : null,
  };
}

/**
 * homebutler's system tools: status, processes, open ports, alerts and their
 * history, all from the background sampler or short-cached readings.
 */
export class SystemCollector implements Collector {
  readonly name = 'system';
  private readonly recorder: AlertRecorder;
  private readonly thresholds: AlertThresholds;
  private readonly hostProcesses: HostProcesses | undefined;
  /** The host's other actions, which the domains' parts of alerts read. */
  private readonly calls = new LocalCalls();

  constructor(private readonly options: SystemCollectorOptions) {
    this.thresholds = new AlertThresholds(options.dataDir, options.thresholds);
    this.recorder = new AlertRecorder(options.dataDir, this.thresholds.current, (crossing) => options.report?.('alert_crossing', crossing));
    const procRoot = options.hostProc ?? options.ownProc;
    this.hostProcesses = procRoot === undefined ? undefined : new HostProcesses(procRoot, options.procFiles);
    options.sampler.onSample((figures) => this.recorder.observe(figures));
  }

  /** Alerts still on are sent again when the stream comes up: a crossing seen while disconnected would be lost otherwise. */
  onConnected(): void {
    for (const crossing of this.recorder.active()) this.options.report?.('alert_crossing', crossing);
  }

  async probe(): Promise<CollectorStatus> {
    try {
      await this.options.sampler.figures();
      return { available: true, reason: '' };
    } catch (error) {
      return { available: false, reason: (error as Error).message };
    }
  }

  /** The container counts; null with the reason when Docker did not answer: `absent` on a host without an engine, which is no failure. */
  private async containerCounts(): Promise<{ running: number | null; total: number | null; docker: 'answered' | 'absent' | 'failed' | 'not asked' }> {
    if (!this.options.containers) return { running: null, total: null, docker: 'not asked' };
    try {
      const counts = await this.options.containers.counts();
      return { running: counts.running, total: counts.total, docker: 'answered' };
    } catch (error) {
      return { running: null, total: null, docker: engineAbsent(error) ? 'absent' : 'failed' };
    }
  }

  /**
   * The processes of the host, with CPU shares over the fixed window: from its
   * /proc (mounted, or the agent's own), else (not Linux) from systeminformation.
   */
  private async processTable(): Promise<ProcessTable> {
    this.refuseContainerView('processes');
    if (!this.hostProcesses) {
      const data = await this.options.si.processes();
      return { list: data.list, all: data.all, unreadable: 0 };
    }
    try {
      return await this.hostProcesses.measure(this.options.cpuWindowMs ?? PROCESS_CPU_WINDOW_MS);
    } catch (error) {
      throw this.hostProcError('processes', error);
    }
  }

  /** Which container each running container id is, for the processes that live in one; empty when Docker does not answer. */
  private async containerNames(list: readonly ProcessRow[]): Promise<ReadonlyMap<string, string>> {
    if (!this.options.containers || !list.some((p) => p.containerId)) return new Map();
    return this.options.containers.namesById().catch(() => new Map());
  }

  /** The listening sockets of the host: from its mounted /proc, else from systeminformation. */
  private async socketTable(): Promise<SocketTable> {
    this.refuseContainerView('listening sockets');
    if (this.options.hostProc === undefined && this.options.ownProc === undefined) {
      const connections = await this.options.si.networkConnections();
      const sockets = connections
        .filter((c) => (c.protocol.startsWith('udp') ? true : c.state === 'LISTEN'))
        .map(
          (c): ListeningSocket => ({
            protocol: c.protocol.startsWith('udp') ? 'udp' : 'tcp',
            address: c.localAddress,
            port: Number(c.localPort),
            pid: c.pid ?? null,
            process: c.process || null,
          }),
        );
      return { sockets, refusedProcesses: 0 };
    }
    try {
      // The host's namespace is its first process's; an agent on the host itself reads its own.
      if (this.options.hostProc !== undefined) return await readHostSockets(this.options.hostProc, this.options.procFiles);
      return await readHostSockets(this.options.ownProc as string, this.options.procFiles, 'self');
    } catch (error) {
      throw this.hostProcError('listening sockets', error);
    }
  }

  /** Without the host's /proc, a container sees only itself: say so rather than answer about it. */
  private refuseContainerView(what: string): void {
    if (this.options.hostProc !== undefined || !this.options.containerOnly) return;
    throw new FleetError(
      'collector_unavailable',
      `this agent runs in a container without the host's /proc: its ${what} would be the container's, not the host's`,
      {
        collector: 'system',
        hint: "Mount the host's /proc read-only at /host/proc (docker run -v /proc:/host/proc:ro; docker-compose.yml and the Helm chart do).",
      },
    );
  }

  /** Nothing about the host could be read: fail rather than answer with the container's own view. */
  private hostProcError(what: string, error: unknown): FleetError {
    return new FleetError(
      'collector_failed',
      `the host's ${what} could not be read from ${this.options.hostProc ?? this.options.ownProc}: ${(error as Error).message}`,
      {
        collector: 'system',
        hint: "Mount the host's /proc read-only where --host-proc points (docker-compose.yml and the Helm chart mount it at /host/proc).",
        cause: error,
      },
    );
  }

  register(dispatcher: Dispatcher): void {
    const { sampler, si } = this.options;
    this.calls.attach(dispatcher);

    dispatcher.register<typeof systemStatus>('system.status', async () => {
      const [figures, os, cpu, containers] = await Promise.all([
        sampler.figures(),
        // The OS and CPU model do not change while the agent runs.
        sampler.cached('osInfo', () => si.osInfo(), STATIC_TTL_MS),
        sampler.cached('cpu', () => si.cpu(), STATIC_TTL_MS),
        this.containerCounts(),
      ]);
      const load = loadavg();
      const round2 = (n: number | undefined) => Math.round((n ?? 0) * 100) / 100;
      return {
        payload: {
          schema_version: 1,
          hostname: os.hostname,
          os: os.distro ? `${os.distro}${os.release ? ` ${os.release}` : ''}` : os.platform,
          kernel: os.kernel,
          arch: os.arch,
          // node:os, not systeminformation's time(): that one forks `date` synchronously for the time zone at every call.
          uptime_s: Math.round(uptime()),
          cpu: { usage_percent: figures.cpuPercent, cores: cpu.cores, load_1: round2(load[0]), load_5: round2(load[1]), load_15: round2(load[2]) },
          memory: figures.memory,
          disks: figures.disks,
          containers_running: containers.running,
          containers_total: containers.total,
          sampled_at_unix_ms: figures.sampledAt,
        },
        failedCollectors: containers.docker === 'failed' ? ['docker'] : [],
        absentCollectors: containers.docker === 'absent' ? ['docker'] : [],
        errors:
          containers.docker === 'failed'
            ? [
                new FleetError('collector_unavailable', 'Docker could not be asked for container counts', {
                  collector: 'docker',
                  hint: 'agent_info shows why the docker collector is unavailable.',
                }).toInfo(),
              ]
            : [],
      };
    });

    dispatcher.register<typeof processes>('system.processes', async (params) => {
      // Callers within the cache's life share one measurement: the same figures for everyone asking at once.
      const data = await sampler.cached('processes', () => this.processTable());
      const limit = params.limit ?? 10;
      const key = params.sort_by === 'mem' ? 'mem' : 'cpu';
      const sorted = [...data.list].sort((a, b) => b[key] - a[key] || a.pid - b.pid);
      const shown = limit === 0 ? sorted : sorted.slice(0, limit);
      const zombies = data.list.filter((p) => p.state === 'zombie');
      const names = await this.containerNames([...shown, ...zombies]);
      return {
        payload: {
          processes: shown.map((p) => toProcess(p, names)),
          zombies: zombies.map((p) => toProcess(p, names)),
          total: data.all,
          cpu_window_ms: this.hostProcesses ? (this.options.cpuWindowMs ?? PROCESS_CPU_WINDOW_MS) : null,
          cpu_cores: data.cpus ?? null,
        },
        failedCollectors: data.unreadable ? ['system'] : [],
        errors: data.unreadable
          ? [
              hostProcFailure(
                `${data.unreadable} of the host's processes could not be read and are left out`,
                "The host's /proc hides other users' processes (mounted with hidepid); remount it without, or run the agent as their user.",
              ),
            ]
          : [],
      };
    });

    dispatcher.register<typeof openPorts>('system.open_ports', async (params) => {
      const table = await sampler.cached('connections', () => this.socketTable());
      let published = new Map<string, string>();
      let dockerFailed = false;
      let dockerAbsent = false;
      if (this.options.containers) {
        try {
          published = await this.options.containers.publishedPorts();
        } catch (error) {
          if (engineAbsent(error)) dockerAbsent = true;
          else dockerFailed = true;
        }
      }
      const seen = new Set<string>();
      const ports = table.sockets
        .map((socket) => ({ ...socket, container: published.get(`${socket.protocol}:${socket.port}`) ?? null }))
        .filter((p) => Number.isInteger(p.port) && p.port > 0)
        .filter((p) => (params.port === undefined || p.port === params.port) && (params.protocol === undefined || p.protocol === params.protocol))
        .filter((p) => {
          const key = `${p.protocol}|${p.address}|${p.port}`;
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        })
        .sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol) || a.address.localeCompare(b.address));
      // A port no readable process holds is only a failure when some process could not be read.
      const unknownOwners = ports.filter((p) => p.pid === null).length;
      const ownersUnknown = unknownOwners > 0 && table.refusedProcesses > 0;
      return {
        payload: { ports },
        failedCollectors: [...(dockerFailed ? ['docker'] : []), ...(ownersUnknown ? ['system'] : [])],
        absentCollectors: dockerAbsent ? ['docker'] : [],
        errors: [
          ...(dockerFailed
            ? [
                new FleetError('collector_unavailable', 'Docker could not be asked which container publishes each port', {
                  collector: 'docker',
                  hint: 'agent_info shows why the docker collector is unavailable.',
                }).toInfo(),
              ]
            : []),
          ...(ownersUnknown
            ? [
                hostProcFailure(
                  `the process holding ${unknownOwners} of ${ports.length} listening sockets is unknown: the open files of ${table.refusedProcesses} host processes could not be read`,
                  OWNER_HINT,
                ),
              ]
            : []),
        ],
      };
    });

    dispatcher.register<typeof alerts>('system.alerts', async (params, context) => {
      const figures = await sampler.figures();
      const thresholds = {
        cpu: params.cpu_threshold ?? this.thresholds.current.cpu,
        memory: params.memory_threshold ?? this.thresholds.current.memory,
        disk: params.disk_threshold ?? this.thresholds.current.disk,
      };
      // What the other domains watch on the host (a failed unit), beside the figures over their thresholds.
      // Loaded with the first call: the domains' alert parts bring their schemas.
      const { domainAlerts } = await import('./domain-alerts.ts');
      const domains = await domainAlerts(this.calls, context);
      const list = [...readings(figures, thresholds), ...domains.rows];
      const worst = list.some((r) => r.state === 'critical') ? 'critical' : list.some((r) => r.state === 'warning') ? 'warning' : 'ok';
      return {
        payload: { alerts: list, worst, next_calls: domains.nextCalls, sampled_at_unix_ms: figures.sampledAt },
        failedCollectors: domains.failed,
      };
    });

    dispatcher.register<typeof setAlertThresholds>('system.set_alert_thresholds', async (params) => {
      const changed = this.thresholds.set({ cpu: params.cpu_threshold, memory: params.memory_threshold, disk: params.disk_threshold });
      const { cpu, memory, disk } = this.thresholds.current;
      return { payload: { thresholds: { cpu_percent: cpu, memory_percent: memory, disk_percent: disk }, changed } };
    });

    dispatcher.register<typeof alertsHistory>('system.alerts_history', async (params) => ({
      payload: { crossings: this.recorder.history(params.since_unix_ms ?? 0, params.limit ?? 100) },
    }));
  }
}
