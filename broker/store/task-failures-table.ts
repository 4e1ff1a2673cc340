import type { SqlEngine } from './sql-engine.ts';

export interface TaskFailure {
  taskId: string;
  clusterId: string;
  serviceId: string;
  at: number;
}

/** When a service's tasks ended involuntarily: the orchestrator itself keeps only five tasks per slot. */
export class TaskFailuresTable {
  constructor(private readonly sql: SqlEngine) {}

  /** Records failures not recorded yet (a task is recorded once, whoever reports it again). */
  async record(failures: readonly TaskFailure[]): Promise<void> {
    if (failures.length === 0) return;
    await this.sql.transaction(async () => {
      for (const failure of failures) {
        await this.sql.run('INSERT INTO task_failures (task_id, cluster_id, service_id, at) VALUES (?, ?, ?, ?) ON CONFLICT (task_id) DO NOTHING', [
          failure.taskId,
          failure.clusterId,
          failure.serviceId,
          failure.at,
        ]);
      }
    });
  }

  async since(sinceUnixMs: number): Promise<TaskFailure[]> {
    const rows = await this.sql.all<{ task_id: string; cluster_id: string; service_id: string; at: number }>(
      'SELECT * FROM task_failures WHERE at >= ? ORDER BY at',
      [sinceUnixMs],
    );
    return rows.map((row) => ({ taskId: row.task_id, clusterId: row.cluster_id, serviceId: row.service_id, at: row.at }));
  }

  async prune(before: number): Promise<void> {
    await this.sql.run('DELETE FROM task_failures WHERE at < ?', [before]);
  }
}
