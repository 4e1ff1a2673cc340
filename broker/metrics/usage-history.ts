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

/** One host's or container's minute so far, and its traffic counter's last reading (for a rate). */
interface Entity {
  /** Its id in the table: the host's id, or host id/container id. */
  id: string;
  row: MetricRow | null;
  counter: { at: number; bytes: number } | null;
  /** When the entity last reported (its reading's time). */
  seenAt: number;
}

/** A host's own entity and its containers', found with one lookup each per heartbeat. */
interface HostEntities {
  host: Entity;
  containers: Map<string, Entity>;
}

const newEntity = (id: string): Entity => ({ id, row: null, counter: null, seenAt: 0 });

/** An entity that has not reported for this long, and whose rows are written, is forgotten. */
const FORGET_AFTER_MS = 10 * MINUTE;

/**
 * Minute-resolution history of every host's and container's CPU, memory and
 * network (and each host's fullest disk), from what agents already send with their heartbeats: no Prometheus.
 * Writes are buffered and flushed together, a minute once it is over; history
 * of a host that went offline stays readable until it ages out (7 days).
 */
export class UsageHistory {
  /**
   * Every host's and container's current minute, updated in place: a fleet
   * of 10,000 hosts sends 2,000 heartbeats a second, each with a dozen
   * containers, and a key string and a fresh row per figure per heartbeat
   * showed in the broker's profiles.
   */
  private readonly hosts = new Map<string, HostEntities>();
  /** Rows whose minute ended while their entity kept reporting, waiting for the next write. */
  private done: MetricRow[] = [];
  private timers: NodeJS.Timeout[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: BrokerStore,
    private readonly registry: AgentRegistry,
    private readonly log: Logger,
    private readonly options: UsageHistoryOptions = DEFAULT_USAGE_HISTORY_OPTIONS,
  ) {}

  start(): void {
    this.store.metrics.openWriter();
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

  /** Bytes per second since the entity's previous counter reading (null the first time, or after a reset). */
  private static rate(entity: Entity, bytes: number | null, at: number): number | null {
    if (bytes === null) return null;
    const previous = entity.counter;
    if (previous === null) {
      entity.counter = { at, bytes };
      return null;
    }
    const rate = at <= previous.at || bytes < previous.bytes ? null : Math.round(((bytes - previous.bytes) / (at - previous.at)) * 1000);
    previous.at = at;
    previous.bytes = bytes;
    return rate;
  }

  /**
   * The entity's row for the minute of this reading, for the caller to
   * update in place; a reading of a new minute sets the finished row aside
   * for the next write.
   */
  private rowOf(entity: Entity, kind: MetricRow['kind'], hostId: string, at: number): MetricRow {
    const minute = minuteOf(at);
    entity.seenAt = at;
    const row = entity.row;
    if (row !== null && row.minute === minute) return row;
    if (row !== null) this.done.push(row);
    entity.row = {
      kind,
      entity: entity.id,
      minute,
      host_id: hostId,
      name: '',
      service: null,
      cpu_percent: null,
      memory_bytes: null,
      net_bytes_per_s: null,
      disk_percent: null,
    };
    return entity.row;
  }

  observe(host: Host, now = Date.now()): void {
    const sample = host.sample;
    if (!sample) return;
    let entities = this.hosts.get(host.id);
    if (entities === undefined) {
      entities = { host: newEntity(host.id), containers: new Map() };
      this.hosts.set(host.id, entities);
    }
    const at = sample.sampled_at_unix_ms;
    const traffic = sample.net_rx_bytes === null || sample.net_tx_bytes === null ? null : sample.net_rx_bytes + sample.net_tx_bytes;
    const rate = UsageHistory.rate(entities.host, traffic, at);
    const row = this.rowOf(entities.host, 'host', host.id, at);
    row.name = host.name;
    row.cpu_percent = sample.cpu_percent;
    row.memory_bytes = sample.memory_used_bytes;
    // Keep a rate the newer reading lacks (a rate needs two readings).
    row.net_bytes_per_s = rate ?? row.net_bytes_per_s;
    row.disk_percent = sample.disk_percent;
    if (host.containerSamplesAt === null || now - host.containerSamplesAt >= 1000) return;
    const containersAt = host.containerSamplesAt;
    for (const container of host.containerSamples) {
      let entity = entities.containers.get(container.id);
      if (entity === undefined) {
        entity = newEntity(`${host.id}/${container.id}`);
        entities.containers.set(container.id, entity);
      }
      const bytes = container.net_rx_bytes === null || container.net_tx_bytes === null ? null : container.net_rx_bytes + container.net_tx_bytes;
      const rate = UsageHistory.rate(entity, bytes, containersAt);
      const row = this.rowOf(entity, 'container', host.id, containersAt);
      row.name = container.name;
      row.service = container.service;
      row.cpu_percent = container.cpu_percent;
      row.memory_bytes = container.memory_usage_bytes;
      row.net_bytes_per_s = rate ?? row.net_bytes_per_s;
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
    const rows = this.done;
    this.done = [];
    const forgetBefore = Date.now() - FORGET_AFTER_MS;
    for (const [hostId, entities] of this.hosts) {
      this.take(entities.host, filling, rows);
      for (const [containerId, entity] of entities.containers) {
        if (this.take(entity, filling, rows) && entity.seenAt < forgetBefore) entities.containers.delete(containerId);
      }
      if (entities.host.row === null && entities.containers.size === 0 && entities.host.seenAt < forgetBefore) this.hosts.delete(hostId);
    }
    if (rows.length === 0) return;
    try {
      await this.store.metrics.upsert(rows);
    } catch (error) {
      this.log.warn('could not record metrics', { error: (error as Error).message });
    }
  }

  /** Moves an entity's row to `rows` unless its minute is the one still filling; true when the entity has no row left. */
  private take(entity: Entity, filling: number | undefined, rows: MetricRow[]): boolean {
    const row = entity.row;
    if (row === null) return true;
    if (row.minute === filling) return false;
    rows.push(row);
    entity.row = null;
    return true;
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
