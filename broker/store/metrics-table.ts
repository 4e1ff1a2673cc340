import type { MetricsWriter } from './metrics-writer.ts';
import { nextTurn, placeholders, queryInBatches, type SqlEngine, type SqlValue, writeInBatches } from './sql-engine.ts';

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
  /** The host's fullest disk; null on a container's row. */
  disk_percent: number | null;
}

/** What `rows` narrows to; every field given must hold. */
export interface MetricsFilter {
  entities?: readonly string[];
  /** The rows of these hosts (a fleet's label selector picks them); not given beside `entities`, which wins. */
  hostIds?: readonly string[];
  service?: string;
  hostId?: string;
  name?: string;
}

/** A service's figures in one minute: the sums over its containers on the hosts asked about. */
export interface ServiceMinute {
  service: string;
  minute: number;
  cpu_percent: number | null;
  memory_bytes: number | null;
  net_bytes_per_s: number | null;
}

/** One entity's figures over a range: the mean of its minutes (null where none had the figure). */
export interface EntityMean {
  entity: string;
  host_id: string;
  name: string;
  cpu_percent: number | null;
  memory_bytes: number | null;
  net_bytes_per_s: number | null;
  disk_percent: number | null;
}

/** Rows per upsert statement: 5,000 parameters, well within what SQLite (32,766) and PostgreSQL (65,535) take. */
const UPSERT_ROWS = 500;

/** Rows deleted per statement when pruning: about 45 ms of SQLite's time on a store of 5 million rows. */
const PRUNE_ROWS = 500;

/**
 * Minute-resolution metrics history, one row per entity and minute. With a
 * `writer` (the broker's SQLite file), writes and prunes go through it to a
 * thread of their own; reads stay here.
 */
export class MetricsTable {
  constructor(
    private readonly sql: SqlEngine,
    private readonly writer: MetricsWriter | null = null,
  ) {}

  /**
   * Writes many rows, a figure a newer row lacks keeping its stored value. A
   * fleet's minute is tens of thousands of rows (2,000 hosts of a dozen
   * containers: 26,000): they go in statements of at most UPSERT_ROWS rows
   * (writeInBatches).
   */
  async upsert(rows: readonly MetricRow[]): Promise<void> {
    if (this.writer !== null) return this.writer.upsert(rows);
    await writeInBatches(rows, UPSERT_ROWS, (chunk) =>
      this.sql.run(
        `INSERT INTO metrics (kind, entity, minute, host_id, name, service, cpu_percent, memory_bytes, net_bytes_per_s, disk_percent)
         VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
         ON CONFLICT (kind, entity, minute) DO UPDATE SET cpu_percent = excluded.cpu_percent, memory_bytes = excluded.memory_bytes,
           net_bytes_per_s = COALESCE(excluded.net_bytes_per_s, metrics.net_bytes_per_s), name = excluded.name, service = excluded.service,
           disk_percent = excluded.disk_percent`,
        chunk.flatMap((row) => [
          row.kind,
          row.entity,
          row.minute,
          row.host_id,
          row.name,
          row.service,
          row.cpu_percent,
          row.memory_bytes,
          row.net_bytes_per_s,
          row.disk_percent,
        ]),
      ),
    );
  }

  /**
   * Drops rows older than `before`, then the oldest minutes past `maxRows`.
   * An hour of a 2,000-host fleet is 1.5 million rows: they go PRUNE_ROWS to a
   * statement, so no statement holds the event loop for long (SQLite).
   */
  async prune(before: number, maxRows: number): Promise<void> {
    if (this.writer !== null) return this.writer.prune(before, maxRows);
    await this.deleteBefore(before);
    const count = (await this.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM metrics'))?.n ?? 0;
    if (count <= maxRows) return;
    const cut = await this.sql.get<{ minute: number }>('SELECT minute FROM metrics ORDER BY minute LIMIT 1 OFFSET ?', [count - maxRows]);
    if (cut) await this.deleteBefore(cut.minute);
  }

  /** Starts the writer's thread, if there is one, ahead of the first write. */
  openWriter(): void {
    this.writer?.open();
  }

  /** Waits for the writes asked for; ends the writer's thread. */
  async close(): Promise<void> {
    await this.writer?.close();
  }

  /** Deletes the rows older than `minute`, oldest first, PRUNE_ROWS to a statement, the event loop free between two. */
  private async deleteBefore(minute: number): Promise<void> {
    for (let deleted = PRUNE_ROWS, first = true; deleted === PRUNE_ROWS; first = false) {
      if (!first) await nextTurn();
      deleted = await this.sql.run(
        'DELETE FROM metrics WHERE (kind, entity, minute) IN (SELECT kind, entity, minute FROM metrics WHERE minute < ? ORDER BY minute LIMIT ?)',
        [minute, PRUNE_ROWS],
      );
    }
  }

  /**
   * Rows of a kind since a time, oldest first, narrowed to some entities, a
   * service, a host or a name: narrowed here, never by the caller after
   * reading every row of the range.
   */
  async rows(kind: MetricKind, filter: MetricsFilter, since: number): Promise<MetricRow[]> {
    const where = ['kind = ?', 'minute >= ?'];
    const args: SqlValue[] = [kind, since];
    if (filter.service !== undefined) {
      where.push('service = ?');
      args.push(filter.service);
    }
    if (filter.hostId !== undefined) {
      where.push('host_id = ?');
      args.push(filter.hostId);
    }
    if (filter.name !== undefined) {
      where.push('name = ?');
      args.push(filter.name);
    }
    const select = (more: string[], moreArgs: readonly string[]) =>
      this.sql.all<MetricRow>(`SELECT * FROM metrics WHERE ${[...where, ...more].join(' AND ')} ORDER BY minute, entity`, [...args, ...moreArgs]);
    const [column, list] = filter.entities ? ['entity', filter.entities] : filter.hostIds ? ['host_id', filter.hostIds] : [];
    if (!column || !list) return select([], []);
    const { rows, batches } = await queryInBatches(list, (batch) => select([`${column} IN (${placeholders(batch.length)})`], batch));
    return batches > 1 ? rows.sort((a, b) => a.minute - b.minute || compareText(a.entity, b.entity)) : rows;
  }

  /**
   * Each host's or container's mean figures since a time, on these hosts: one
   * row per entity, averaged by the store, however many minutes the range
   * holds (a week of a 2,000-host fleet's containers is millions of rows,
   * too many to read to rank them).
   */
  async means(kind: MetricKind, hostIds: readonly string[], since: number): Promise<EntityMean[]> {
    const { rows } = await queryInBatches(hostIds, (batch) =>
      this.sql.all<EntityMean>(
        `SELECT entity, MAX(host_id) AS host_id, MAX(name) AS name, AVG(cpu_percent) AS cpu_percent, AVG(memory_bytes) AS memory_bytes,
           AVG(net_bytes_per_s) AS net_bytes_per_s, AVG(disk_percent) AS disk_percent
         FROM metrics WHERE kind = ? AND minute >= ? AND host_id IN (${placeholders(batch.length)})
         GROUP BY entity ORDER BY entity`,
        [kind, since, ...batch],
      ),
    );
    // An entity's rows are all of one host, so no two batches hold the same entity.
    return rows;
  }

  /**
   * Each service's figures per minute since a time, summed over its containers
   * on these hosts (a figure no container had stays null), oldest first: one
   * row per service and minute, however many containers the services run.
   */
  async serviceMinutes(hostIds: readonly string[], since: number): Promise<ServiceMinute[]> {
    const { rows, batches } = await queryInBatches(hostIds, (batch) =>
      this.sql.all<ServiceMinute>(
        `SELECT service, minute, SUM(cpu_percent) AS cpu_percent, SUM(memory_bytes) AS memory_bytes, SUM(net_bytes_per_s) AS net_bytes_per_s
         FROM metrics WHERE kind = 'container' AND minute >= ? AND service IS NOT NULL AND host_id IN (${placeholders(batch.length)})
         GROUP BY service, minute ORDER BY minute, service`,
        [since, ...batch],
      ),
    );
    return batches > 1 ? sumAgain(rows) : rows;
  }
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One sum per service and minute from the sums of several batches of hosts, in the store's order. */
function sumAgain(rows: readonly ServiceMinute[]): ServiceMinute[] {
  const plus = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);
  const sums = new Map<string, ServiceMinute>();
  for (const row of rows) {
    const key = `${row.minute}\u0000${row.service}`;
    const sum = sums.get(key);
    if (!sum) sums.set(key, { ...row });
    else {
      sum.cpu_percent = plus(sum.cpu_percent, row.cpu_percent);
      sum.memory_bytes = plus(sum.memory_bytes, row.memory_bytes);
      sum.net_bytes_per_s = plus(sum.net_bytes_per_s, row.net_bytes_per_s);
    }
  }
  return [...sums.values()].sort((a, b) => a.minute - b.minute || compareText(a.service, b.service));
}
