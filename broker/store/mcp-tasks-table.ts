import { type BrokerScope, whereBrokers } from './broker-scope.ts';
import { placeholders, queryInBatches, type SqlEngine, type SqlValue } from './sql-engine.ts';

export const MCP_TASK_STATUSES = ['working', 'completed', 'failed', 'cancelled'] as const;
export type McpTaskStatus = (typeof MCP_TASK_STATUSES)[number];

export interface McpTaskRow {
  taskId: string;
  identityId: string;
  tool: string;
  status: McpTaskStatus;
  statusMessage: string | null;
  /** The MCP tool result, once the task has ended. */
  result: unknown;
  cancelRequested: boolean;
  /** The audit row of the task's call, once it has one (calls of level 1 or more). */
  auditId: string | null;
  /** Working, but waiting for another identity's approval (shown as `input_required`). */
  inputRequired: boolean;
  createdAt: number;
  updatedAt: number;
  ttlMs: number;
  expiresAt: number;
}

interface RawRow {
  task_id: string;
  identity_id: string;
  tool: string;
  status: McpTaskStatus;
  status_message: string | null;
  result_json: string | null;
  cancel_requested: number | string;
  audit_id: string | null;
  input_required: number | string;
  created_at: number | string;
  updated_at: number | string;
  ttl_ms: number | string;
  expires_at: number | string;
}

function fromRaw(row: RawRow): McpTaskRow {
  return {
    taskId: row.task_id,
    identityId: row.identity_id,
    tool: row.tool,
    status: row.status,
    statusMessage: row.status_message,
    result: row.result_json === null ? null : JSON.parse(row.result_json),
    cancelRequested: Number(row.cancel_requested) === 1,
    auditId: row.audit_id,
    inputRequired: Number(row.input_required) === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    ttlMs: Number(row.ttl_ms),
    expiresAt: Number(row.expires_at),
  };
}

/** The status message of a task whose broker stopped while it worked. */
export const BROKER_STOPPED = 'the broker running this task stopped before it ended';

/** Which working tasks a broker that stopped left behind (see `interrupt`). */
export interface InterruptedScope extends BrokerScope {
  taskId?: string;
}

/** MCP tasks, by the identity that made them: kept until they expire, whichever broker ran them. */
export class McpTasksTable {
  /**
   * @param brokerId in a cluster, this broker's id: written on the tasks it
   * runs, so the others end the tasks of a broker that died
   */
  constructor(
    private readonly sql: SqlEngine,
    private readonly brokerId: string | undefined,
  ) {}

  async insert(row: Omit<McpTaskRow, 'result' | 'cancelRequested' | 'statusMessage' | 'auditId' | 'inputRequired'> & { statusMessage: string }): Promise<void> {
    await this.sql.run(
      'INSERT INTO mcp_tasks (task_id, identity_id, tool, status, status_message, created_at, updated_at, ttl_ms, expires_at, broker_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [row.taskId, row.identityId, row.tool, row.status, row.statusMessage, row.createdAt, row.updatedAt, row.ttlMs, row.expiresAt, this.brokerId ?? null],
    );
  }

  /** The audit row of the task's call, for its result if the broker running it stops. */
  async audited(taskId: string, auditId: string): Promise<void> {
    await this.sql.run('UPDATE mcp_tasks SET audit_id = ? WHERE task_id = ?', [auditId, taskId]);
  }

  /** The task, if it belongs to the identity and has not expired. */
  async get(identityId: string, taskId: string, now: number): Promise<McpTaskRow | undefined> {
    const row = await this.sql.get<RawRow>('SELECT * FROM mcp_tasks WHERE task_id = ? AND identity_id = ? AND expires_at > ?', [taskId, identityId, now]);
    return row && fromRaw(row);
  }

  async list(identityId: string, now: number, limit: number, before?: number): Promise<McpTaskRow[]> {
    const rows = await this.sql.all<RawRow>(
      `SELECT * FROM mcp_tasks WHERE identity_id = ? AND expires_at > ?${before === undefined ? '' : ' AND created_at < ?'} ORDER BY created_at DESC LIMIT ?`,
      before === undefined ? [identityId, now, limit] : [identityId, now, before, limit],
    );
    return rows.map(fromRaw);
  }

  /** A new status message of a task still working; resolves false when it had already ended. */
  async progress(taskId: string, statusMessage: string, now: number): Promise<boolean> {
    const changed = await this.sql.run("UPDATE mcp_tasks SET status_message = ?, updated_at = ? WHERE task_id = ? AND status = 'working'", [
      statusMessage,
      now,
      taskId,
    ]);
    return changed > 0;
  }

  /** A task still working starts or stops waiting for an approval, saying so; resolves false when it had already ended. */
  async inputRequired(taskId: string, waiting: boolean, statusMessage: string, now: number): Promise<boolean> {
    const changed = await this.sql.run("UPDATE mcp_tasks SET input_required = ?, status_message = ?, updated_at = ? WHERE task_id = ? AND status = 'working'", [
      waiting ? 1 : 0,
      statusMessage,
      now,
      taskId,
    ]);
    return changed > 0;
  }

  /**
   * Ends a task still working, or one ended as interrupted by a broker that
   * thought this one dead (its real end replaces that); resolves false when
   * it had already ended.
   */
  async finish(taskId: string, status: Exclude<McpTaskStatus, 'working'>, statusMessage: string, result: unknown, now: number): Promise<boolean> {
    const changed = await this.sql.run(
      "UPDATE mcp_tasks SET status = ?, status_message = ?, result_json = ?, updated_at = ?, expires_at = ? + ttl_ms WHERE task_id = ? AND (status = 'working' OR (status = 'failed' AND result_json IS NULL))",
      [status, statusMessage, JSON.stringify(result), now, now, taskId],
    );
    return changed > 0;
  }

  /**
   * Ends as failed the tasks still working that a broker which stopped left
   * behind, with no result: their result is what the audit knows, read when
   * asked for (an agent's late answer may reach the audit later). `brokerIds`
   * limits it to the tasks of those brokers, `except` to those of brokers not
   * among the ones still alive; with neither, every working task (a single
   * broker starting). Resolves with how many ended.
   */
  interrupt(scope: InterruptedScope, statusMessage: string, now: number): Promise<number> {
    const where = ["status = 'working'"];
    const args: SqlValue[] = [statusMessage, now, now];
    if (scope.taskId !== undefined) {
      where.push('task_id = ?');
      args.push(scope.taskId);
    }
    if (!whereBrokers(scope, where, args)) return Promise.resolve(0);
    // The status message keeps the last progress: what the task knew of its hosts.
    return this.sql.run(
      `UPDATE mcp_tasks SET status = 'failed', status_message = CAST(? AS TEXT) || COALESCE('; last progress: ' || status_message, ''), result_json = NULL,
         updated_at = ?, expires_at = ? + ttl_ms WHERE ${where.join(' AND ')}`,
      args,
    );
  }

  /** Asks whichever broker runs the task to stop it. */
  async requestCancel(taskId: string): Promise<void> {
    await this.sql.run("UPDATE mcp_tasks SET cancel_requested = 1 WHERE task_id = ? AND status = 'working'", [taskId]);
  }

  async cancelRequested(taskIds: readonly string[]): Promise<string[]> {
    const { rows } = await queryInBatches(taskIds, (batch) =>
      this.sql.all<{ task_id: string }>(`SELECT task_id FROM mcp_tasks WHERE cancel_requested = 1 AND task_id IN (${placeholders(batch.length)})`, batch),
    );
    return rows.map((row) => row.task_id);
  }

  async prune(now: number): Promise<void> {
    await this.sql.run('DELETE FROM mcp_tasks WHERE expires_at <= ?', [now]);
  }
}
