import type { SqlEngine, SqlValue } from './sql-engine.ts';

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

/** Minute-resolution metrics history, one row per entity and minute. */
export class MetricsTable {
  constructor(private readonly sql: SqlEngine) {}

  /** Writes many rows in one transaction; a figure a newer row lacks keeps its stored value. */
  async upsert(rows: readonly MetricRow[]): Promise<void> {
    await this.sql.transaction(async () => {
      for (const row of rows) {
        await this.sql.run(
          `INSERT INTO metrics (kind, entity, minute, host_id, name, service, cpu_percent, memory_bytes, net_bytes_per_s)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (kind, entity, minute) DO UPDATE SET cpu_percent = excluded.cpu_percent, memory_bytes = excluded.memory_bytes,
             net_bytes_per_s = COALESCE(excluded.net_bytes_per_s, metrics.net_bytes_per_s), name = excluded.name, service = excluded.service`,
          [row.kind, row.entity, row.minute, row.host_id, row.name, row.service, row.cpu_percent, row.memory_bytes, row.net_bytes_per_s],
        );
      }
    });
  }

  /** Drops rows older than `before`, then the oldest minutes past `maxRows`. */
  async prune(before: number, maxRows: number): Promise<void> {
    await this.sql.run('DELETE FROM metrics WHERE minute < ?', [before]);
    const count = (await this.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM metrics'))?.n ?? 0;
    if (count <= maxRows) return;
    const cut = await this.sql.get<{ minute: number }>('SELECT minute FROM metrics ORDER BY minute LIMIT 1 OFFSET ?', [count - maxRows]);
    if (cut) await this.sql.run('DELETE FROM metrics WHERE minute < ?', [cut.minute]);
  }

  /** Rows of a kind since a time, oldest first, narrowed to some entities, a service or a host. */
  async rows(kind: MetricKind, filter: { entities?: string[]; service?: string; hostId?: string }, since: number): Promise<MetricRow[]> {
    const where = ['kind = ?', 'minute >= ?'];
    const args: SqlValue[] = [kind, since];
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
    return this.sql.all<MetricRow>(`SELECT * FROM metrics WHERE ${where.join(' AND ')} ORDER BY minute, entity`, args);
  }
}
