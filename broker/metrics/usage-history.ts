import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { EntityMean, MetricKind, MetricRow, MetricsFilter, ServiceMinute } from '../store/metrics-table.ts';

export type { MetricRow };

interface UsageHistoryOptions {
  retentionMs: number;
  /** The table never holds more rows than this; the oldest go first. */
  maxRows: number;
  flushIntervalMs: number;
}

const DEFAULT_USAGE_HISTORY_OPTIONS: UsageHistoryOptions = { retentionMs: 7 * 86_400_000, maxRows: 5_000_000, flushIntervalMs: 15_000 };

const MINUTE = 60_000;

function minuteOf(unixMs: number): number {
  return Math.floor(unixMs / MINUTE) * MINUTE;
}

/**
 * Minute-resolution history of every host's and container's CPU, memory and
 * network (and each host's fullest disk), from what agents already send with their heartbeats: no Prometheus.
 * Writes are buffered and flushed together, a minute once it is over; history
 * of a host that went offline stays readable until it ages out (7 days).
 */
export class UsageHistory {
  private readonly pending = new Map<string, MetricRow>();
  private readonly counters = new Map<string, { at: number; bytes: number }>();
  private timers: NodeJS.Timeout[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: BrokerStore,
    private readonly registry: AgentRegistry,
    private readonly log: Logger,
    private readonly options: UsageHistoryOptions = DEFAULT_USAGE_HISTORY_OPTIONS,
  ) {}

  start(): void {
    this.registry.on('heartbeat', (host) => this.observe(host));
    this.timers = [
      setInterval(() => void this.flush(minuteOf(Date.now())), this.options.flushIntervalMs),
      setInterval(() => void this.prune().catch((error: unknown) => this.log.warn('could not prune metrics', { error: (error as Error).message })), 3_600_000),
    ];
    for (const timer of this.timers) timer.unref();
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await this.flush();
  }

  /** Bytes per second since the previous reading of a counter (null the first time, or after a reset). */
  private rate(key: string, bytes: number | null, at: number): number | null {
    if (bytes === null) return null;
    const previous = this.counters.get(key);
    this.counters.set(key, { at, bytes });
    if (!previous || at <= previous.at || bytes < previous.bytes) return null;
    return Math.round(((bytes - previous.bytes) / (at - previous.at)) * 1000);
  }

  private put(row: MetricRow): void {
    const key = `${row.kind}|${row.entity}|${row.minute}`;
    const existing = this.pending.get(key);
    // Keep a figure the newer reading lacks (a rate needs two readings).
    this.pending.set(key, existing ? { ...row, net_bytes_per_s: row.net_bytes_per_s ?? existing.net_bytes_per_s } : row);
  }

  observe(host: Host, now = Date.now()): void {
    const sample = host.sample;
    if (!sample) return;
    const minute = minuteOf(sample.sampled_at_unix_ms);
    const traffic = sample.net_rx_bytes === null || sample.net_tx_bytes === null ? null : sample.net_rx_bytes + sample.net_tx_bytes;
    this.put({
      kind: 'host',
      entity: host.id,
      minute,
      host_id: host.id,
      name: host.name,
      service: null,
      cpu_percent: sample.cpu_percent,
      memory_bytes: sample.memory_used_bytes,
      net_bytes_per_s: this.rate(`host|${host.id}`, traffic, sample.sampled_at_unix_ms),
      disk_percent: sample.disk_percent,
    });
    if (host.containerSamplesAt !== null && now - host.containerSamplesAt < 1000) {
      const at = host.containerSamplesAt;
      for (const container of host.containerSamples) {
        const bytes = container.net_rx_bytes === null || container.net_tx_bytes === null ? null : container.net_rx_bytes + container.net_tx_bytes;
        this.put({
          kind: 'container',
          entity: `${host.id}/${container.id}`,
          minute: minuteOf(at),
          host_id: host.id,
          name: container.name,
          service: container.service,
          cpu_percent: container.cpu_percent,
          memory_bytes: container.memory_usage_bytes,
          net_bytes_per_s: this.rate(`container|${host.id}/${container.id}`, bytes, at),
          disk_percent: null,
        });
      }
    }
  }

  /**
   * Writes what is pending, or with `filling` all but that minute's rows;
   * resolves once the store took them (or refused them: the failure is
   * logged, the rows dropped). A write waits for the one before it, so an
   * older reading of a minute never lands after a newer one.
   *
   * The timer's flushes leave the minute still filling in memory, where later
   * heartbeats update it: each row is written once, when its minute is over,
   * not at every flush of the minute. On a store of millions of rows a row
   * written costs far more than one updated in memory. Readers flush all, and
   * see the minute so far.
   */
  flush(filling?: number): Promise<void> {
    this.flushing = this.flushing.then(() => this.write(filling));
    return this.flushing;
  }

  private async write(filling: number | undefined): Promise<void> {
    const rows: MetricRow[] = [];
    for (const [key, row] of this.pending) {
      if (row.minute === filling) continue;
      rows.push(row);
      this.pending.delete(key);
    }
    if (rows.length === 0) return;
    try {
      await this.store.metrics.upsert(rows);
    } catch (error) {
      this.log.warn('could not record metrics', { error: (error as Error).message });
    }
  }

  async prune(now = Date.now()): Promise<void> {
    await this.store.metrics.prune(now - this.options.retentionMs, this.options.maxRows);
  }

  /** Rows of these entities since a time, oldest first (flushing what is pending first). */
  async rows(kind: MetricKind, filter: MetricsFilter, since: number): Promise<MetricRow[]> {
    await this.flush();
    return this.store.metrics.rows(kind, filter, since);
  }

  /** Each host's or container's mean figures on these hosts since a time (flushing what is pending first). */
  async means(kind: MetricKind, hostIds: readonly string[], since: number): Promise<EntityMean[]> {
    await this.flush();
    return this.store.metrics.means(kind, hostIds, since);
  }

  /** Each service's figures per minute on these hosts since a time (flushing what is pending first). */
  async serviceMinutes(hostIds: readonly string[], since: number): Promise<ServiceMinute[]> {
    await this.flush();
    return this.store.metrics.serviceMinutes(hostIds, since);
  }
}
