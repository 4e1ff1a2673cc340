import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { BrokerStore } from '../store/broker-store.ts';

export type MetricKind = 'host' | 'container';

export interface MetricRow {
  kind: MetricKind;
  entity: string;
  minute: number;
  host_id: string;
  name: string;
  service: string | null;
  cpu_percent: number | null;
  memory_bytes: number | null;
  net_bytes_per_s: number | null;
}

export interface MetricsStoreOptions {
  retentionMs: number;
  /** The table never holds more rows than this; the oldest go first. */
  maxRows: number;
  flushIntervalMs: number;
}

export const DEFAULT_METRICS_OPTIONS: MetricsStoreOptions = { retentionMs: 7 * 86_400_000, maxRows: 5_000_000, flushIntervalMs: 15_000 };

const MINUTE = 60_000;

/**
 * Minute-resolution history of every host's and container's CPU, memory and
 * network, from what agents already send with their heartbeats: no Prometheus.
 * Writes are buffered and flushed together; history of a host that went
 * offline stays readable until it ages out (7 days).
 */
export class MetricsStore {
  private readonly pending = new Map<string, MetricRow>();
  private readonly counters = new Map<string, { at: number; bytes: number }>();
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly store: BrokerStore,
    private readonly registry: AgentRegistry,
    private readonly log: Logger,
    private readonly options: MetricsStoreOptions = DEFAULT_METRICS_OPTIONS,
  ) {}

  start(): void {
    this.registry.on('heartbeat', (host) => this.observe(host));
    this.timers = [setInterval(() => this.flush(), this.options.flushIntervalMs), setInterval(() => this.prune(), 3_600_000)];
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.flush();
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
    const minute = Math.floor(sample.sampled_at_unix_ms / MINUTE) * MINUTE;
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
    });
    if (host.containerSamplesAt !== null && now - host.containerSamplesAt < 1000) {
      const at = host.containerSamplesAt;
      for (const container of host.containerSamples) {
        const bytes = container.net_rx_bytes === null || container.net_tx_bytes === null ? null : container.net_rx_bytes + container.net_tx_bytes;
        this.put({
          kind: 'container',
          entity: `${host.id}/${container.id}`,
          minute: Math.floor(at / MINUTE) * MINUTE,
          host_id: host.id,
          name: container.name,
          service: container.service,
          cpu_percent: container.cpu_percent,
          memory_bytes: container.memory_usage_bytes,
          net_bytes_per_s: this.rate(`container|${host.id}/${container.id}`, bytes, at),
        });
      }
    }
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending.clear();
    const upsert = this.store.db.prepare(
      `INSERT INTO metrics (kind, entity, minute, host_id, name, service, cpu_percent, memory_bytes, net_bytes_per_s)
       VALUES (@kind, @entity, @minute, @host_id, @name, @service, @cpu_percent, @memory_bytes, @net_bytes_per_s)
       ON CONFLICT(kind, entity, minute) DO UPDATE SET cpu_percent = excluded.cpu_percent, memory_bytes = excluded.memory_bytes,
         net_bytes_per_s = COALESCE(excluded.net_bytes_per_s, metrics.net_bytes_per_s), name = excluded.name, service = excluded.service`,
    );
    try {
      this.store.db.transaction(() => {
        for (const row of rows) upsert.run(row);
      })();
    } catch (error) {
      this.log.warn('could not record metrics', { error: (error as Error).message });
    }
  }

  prune(now = Date.now()): void {
    this.store.db.prepare('DELETE FROM metrics WHERE minute < ?').run(now - this.options.retentionMs);
    const count = (this.store.db.prepare('SELECT COUNT(*) AS n FROM metrics').get() as { n: number }).n;
    if (count > this.options.maxRows) {
      const cut = this.store.db.prepare('SELECT minute FROM metrics ORDER BY minute LIMIT 1 OFFSET ?').get(count - this.options.maxRows) as
        | { minute: number }
        | undefined;
      if (cut) this.store.db.prepare('DELETE FROM metrics WHERE minute < ?').run(cut.minute);
    }
  }

  /** Rows of these entities since a time, oldest first (flushing what is pending first). */
  rows(kind: MetricKind, filter: { entities?: string[]; service?: string; hostId?: string }, since: number): MetricRow[] {
    this.flush();
    const where = ['kind = ?', 'minute >= ?'];
    const args: (string | number)[] = [kind, since];
    if (filter.entities) {
      if (filter.entities.length === 0) return [];
      where.push(`entity IN (${filter.entities.map(() => '?').join(',')})`);
      args.push(...filter.entities);
    }
    if (filter.service !== undefined) {
      where.push('service = ?');
      args.push(filter.service);
    }
    if (filter.hostId !== undefined) {
      where.push('host_id = ?');
      args.push(filter.hostId);
    }
    return this.store.db.prepare(`SELECT * FROM metrics WHERE ${where.join(' AND ')} ORDER BY minute`).all(...args) as MetricRow[];
  }
}
