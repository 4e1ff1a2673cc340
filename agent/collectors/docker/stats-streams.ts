import type { Readable } from 'node:stream';
import type { EngineClient } from '../../engine/engine-client.ts';
import type { EngineStats } from '../../engine/engine-stats.ts';
import { onJsonLines } from '../../engine/json-lines.ts';

interface StatsFigures {
  cpu_percent: number | null;
  memory_usage_bytes: number;
  memory_limit_bytes: number;
  memory_percent: number;
  net_rx_bytes: number;
  net_tx_bytes: number;
  block_read_bytes: number;
  block_write_bytes: number;
  pids: number;
  sampled_at_unix_ms: number;
}

/** The figures `docker stats` shows, from one streamed sample (CPU needs the previous one, which the stream carries). */
export function figuresOf(stats: EngineStats): StatsFigures {
  const cpuDelta = stats.cpu_stats.cpu_usage.total_usage - stats.precpu_stats.cpu_usage.total_usage;
  const systemDelta = (stats.cpu_stats.system_cpu_usage ?? 0) - (stats.precpu_stats.system_cpu_usage ?? 0);
  const cpus = stats.cpu_stats.online_cpus ?? stats.cpu_stats.cpu_usage.percpu_usage?.length ?? 1;
  const hasPrevious = (stats.precpu_stats.system_cpu_usage ?? 0) > 0;
  const cpu = hasPrevious && systemDelta > 0 && cpuDelta >= 0 ? (cpuDelta / systemDelta) * cpus * 100 : hasPrevious ? 0 : null;
  const memStats = stats.memory_stats.stats ?? {};
  // As the docker CLI does: page cache the kernel can reclaim is not "used".
  const cache = memStats.inactive_file ?? memStats.total_inactive_file ?? 0;
  const usage = Math.max(0, (stats.memory_stats.usage ?? 0) - cache);
  const limit = stats.memory_stats.limit ?? 0;
  let rx = 0;
  let tx = 0;
  for (const network of Object.values(stats.networks ?? {})) {
    rx += network.rx_bytes;
    tx += network.tx_bytes;
  }
  let read = 0;
  let write = 0;
  for (const entry of stats.blkio_stats?.io_service_bytes_recursive ?? []) {
    if (entry.op.toLowerCase() === 'read') read += entry.value;
    if (entry.op.toLowerCase() === 'write') write += entry.value;
  }
  const round2 = (n: number) => Math.round(n * 100) / 100;
  return {
    cpu_percent: cpu === null ? null : round2(cpu),
    memory_usage_bytes: usage,
    memory_limit_bytes: limit,
    memory_percent: limit > 0 ? round2((usage / limit) * 100) : 0,
    net_rx_bytes: rx,
    net_tx_bytes: tx,
    block_read_bytes: read,
    block_write_bytes: write,
    pids: stats.pids_stats?.current ?? 0,
    sampled_at_unix_ms: Date.parse(stats.read) || Date.now(),
  };
}

interface Warm {
  stream: Readable | undefined;
  latest: StatsFigures | undefined;
  lastAsked: number;
  waiters: (() => void)[];
}

/**
 * The engine takes about a second to produce each stats sample (it measures
 * CPU over an interval), so asking containers one by one costs a second each.
 * Instead a stream per running container is kept open while stats are being
 * asked for, and a call reads the latest sample of each: the first call waits
 * for the streams to warm (once, in parallel), later ones answer at once.
 */
export class StatsStreams {
  private readonly warm = new Map<string, Warm>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly docker: Pick<EngineClient, 'getContainer'>,
    /** Close a stream nobody asked for in this long. */
    private readonly idleMs = 5 * 60_000,
  ) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(60_000, idleMs));
    this.sweeper.unref();
  }

  /** The latest figures of each container, waiting at most `waitMs` for streams still warming. */
  async figures(ids: string[], waitMs: number, now = Date.now()): Promise<Map<string, StatsFigures>> {
    for (const id of ids) this.ensure(id, now);
    const cold = ids.map((id) => this.warm.get(id) as Warm).filter((w) => w.latest?.cpu_percent === null || !w.latest);
    if (cold.length) {
      await Promise.race([
        Promise.all(cold.map((w) => new Promise<void>((resolve) => w.waiters.push(resolve)))),
        new Promise((resolve) => setTimeout(resolve, waitMs).unref()),
      ]);
    }
    return new Map(ids.flatMap((id) => (this.warm.get(id)?.latest ? [[id, this.warm.get(id)?.latest as StatsFigures]] : [])));
  }

  /** The latest figures already at hand, without opening anything (for heartbeats). */
  latest(): Map<string, StatsFigures> {
    return new Map([...this.warm].flatMap(([id, w]) => (w.latest ? [[id, w.latest]] : [])));
  }

  private ensure(id: string, now: number): void {
    const existing = this.warm.get(id);
    if (existing) {
      existing.lastAsked = now;
      return;
    }
    const entry: Warm = { stream: undefined, latest: undefined, lastAsked: now, waiters: [] };
    this.warm.set(id, entry);
    this.docker
      .getContainer(id)
      .stats({ stream: true })
      .then((stream) => {
        entry.stream = stream as unknown as Readable;
        onJsonLines(entry.stream, (value) => {
          try {
            entry.latest = figuresOf(value as EngineStats);
          } catch {
            return;
          }
          // A sample with CPU computed (the second one) is what a caller waits for.
          if (entry.latest.cpu_percent !== null) for (const wake of entry.waiters.splice(0)) wake();
        });
        const drop = () => {
          if (this.warm.get(id) === entry) this.warm.delete(id);
          for (const wake of entry.waiters.splice(0)) wake();
        };
        entry.stream.on('end', drop);
        entry.stream.on('error', drop);
      })
      .catch(() => {
        this.warm.delete(id);
        for (const wake of entry.waiters.splice(0)) wake();
      });
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [id, entry] of this.warm) {
      if (now - entry.lastAsked > this.idleMs) {
        this.warm.delete(id);
        entry.stream?.destroy();
      }
    }
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const entry of this.warm.values()) entry.stream?.destroy();
    this.warm.clear();
  }
}
