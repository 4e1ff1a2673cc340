import { readFileSync } from 'node:fs';
import { arch, hostname, loadavg } from 'node:os';
import { join } from 'node:path';
import type { HostSample } from '../../shared/catalog/sample.ts';
import { type CheapReadings, type Disk, ProcReadings } from './proc-readings.ts';

export type { Disk } from './proc-readings.ts';

export interface CheapFigures {
  cpuPercent: number | null;
  memory: { total_bytes: number; used_bytes: number; available_bytes: number; usage_percent: number };
  disks: Disk[];
  sampledAt: number;
}

/** Extra figures another collector adds to every heartbeat sample (container counts…). */
type SampleContributor = () => Partial<HostSample>;

const round1 = (value: number) => Math.round(value * 10) / 10;

/**
 * Bytes received and sent on every interface but loopback, since boot, from a
 * /proc/net/dev (null where there is none). Read in the agent's container, the
 * own /proc/net/dev is the container's network; the host's is
 * `<host proc>/1/net/dev`, the namespace of the host's first process.
 */
function networkCounters(path: string): { net_rx_bytes: number | null; net_tx_bytes: number | null } {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch {
    return { net_rx_bytes: null, net_tx_bytes: null };
  }
  let rx = 0;
  let tx = 0;
  for (const line of content.split('\n').slice(2)) {
    const [name, data] = line.split(':');
    if (!name || !data || name.trim() === 'lo') continue;
    const fields = data.trim().split(/\s+/).map(Number);
    rx += fields[0] ?? 0;
    tx += fields[8] ?? 0;
  }
  return { net_rx_bytes: rx, net_tx_bytes: tx };
}

/**
 * The cheap figures (CPU, memory, disks: a few reads of /proc and statfs) are
 * sampled in the background every few seconds from the start, and the expensive ones
 * (processes, connections) are read on demand and kept for a short while: no
 * call waits on a cold sample.
 */
export class SystemSampler {
  private cheap: CheapFigures | undefined;
  private warming: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly contributors: SampleContributor[] = [];
  private readonly cache = new Map<string, { at: number; value: Promise<unknown> }>();
  private readonly listeners: ((figures: CheapFigures) => void)[] = [];

  constructor(
    private readonly readings: CheapReadings = new ProcReadings(),
    private readonly intervalMs = 5000,
    private readonly cacheMs = 2000,
    /** The host's /proc mounted into the agent's container, when the agent runs in one (see networkCounters). */
    private readonly hostProc?: string,
  ) {}

  start(): void {
    this.warming = this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Called with every fresh sample (the alert recorder listens). */
  onSample(listener: (figures: CheapFigures) => void): void {
    this.listeners.push(listener);
  }

  addContributor(contributor: SampleContributor): void {
    this.contributors.push(contributor);
  }

  private async refresh(): Promise<void> {
    try {
      const [cpuPercent, mem, disks] = await Promise.all([this.readings.cpuPercent(), this.readings.memory(), this.readings.disks()]);
      const used = mem.total_bytes - mem.available_bytes;
      this.cheap = {
        cpuPercent,
        memory: {
          total_bytes: mem.total_bytes,
          used_bytes: used,
          available_bytes: mem.available_bytes,
          usage_percent: mem.total_bytes > 0 ? round1((used / mem.total_bytes) * 100) : 0,
        },
        disks,
        sampledAt: Date.now(),
      };
      for (const listener of this.listeners) listener(this.cheap);
    } catch {
      // Keep the previous sample; the next tick tries again.
    }
  }

  /** The latest cheap figures, waiting only for the very first sample. */
  async figures(): Promise<CheapFigures> {
    if (!this.cheap) await (this.warming ?? this.refresh());
    if (!this.cheap) throw new Error('the system sampler could not read CPU, memory and disks');
    return this.cheap;
  }

  /** An expensive reading, shared by the calls that ask within cacheMs (or `ttlMs` for figures that rarely change). */
  cached<T>(key: string, read: () => Promise<T>, ttlMs = this.cacheMs): Promise<T> {
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value as Promise<T>;
    const value = read();
    this.cache.set(key, { at: Date.now(), value });
    value.catch(() => this.cache.delete(key));
    return value;
  }

  /** The small sample every heartbeat carries (never waits: null figures until the first sample). */
  heartbeatSample(): HostSample {
    const cheap = this.cheap;
    const fullest = cheap?.disks.reduce<Disk | undefined>((worst, disk) => (!worst || disk.usage_percent > worst.usage_percent ? disk : worst), undefined);
    const sample: HostSample = {
      cpu_percent: cheap?.cpuPercent ?? null,
      memory_percent: cheap ? cheap.memory.usage_percent : null,
      memory_used_bytes: cheap ? cheap.memory.used_bytes : null,
      memory_total_bytes: cheap ? cheap.memory.total_bytes : null,
      disk_percent: fullest?.usage_percent ?? null,
      disk_mount: fullest?.mount ?? null,
      load_1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
      containers_running: null,
      containers_total: null,
      ...networkCounters(this.hostProc === undefined ? '/proc/net/dev' : join(this.hostProc, '1', 'net', 'dev')),
      sampled_at_unix_ms: cheap?.sampledAt ?? Date.now(),
    };
    for (const contribute of this.contributors) Object.assign(sample, contribute());
    return sample;
  }

  static staticFacts(): { hostname: string; arch: string } {
    return { hostname: hostname(), arch: arch() };
  }
}
