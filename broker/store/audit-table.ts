import { type BrokerScope, whereBrokers } from './broker-scope.ts';
import type { SqlEngine, SqlValue } from './sql-engine.ts';

export type AuditOutcome = 'pending' | 'ok' | 'partial' | 'error' | 'refused' | 'cancelled' | 'interrupted';

export interface AuditRow {
  seq: number;
  callId: string;
  startedAt: number;
  finishedAt: number | null;
  identity: string;
  tool: string;
  action: string;
  level: number;
  targets: string[];
  /** The ids of the agents among the targets, in the same order (a name can pass to a new agent; an id never does). */
  targetIds: string[];
  arguments: Record<string, unknown>;
  outcome: AuditOutcome;
  errorCode: string | null;
  durationMs: number | null;
  /** What the outcome alone does not say (an agent that finished after the caller's deadline). */
  note: string | null;
  /** Where a refused stranger came from (no identity was proven); null for identities' calls. */
  source: string | null;
  /** Why a call was refused, in a few words. */
  reason: string | null;
  /** In a cluster, the broker that began the row (and completes it); null on a single broker. */
  brokerId: string | null;
  /** For a person signed in through OAuth: their subject at the issuer that knows them, their email if it said, and the client they used. */
  subject: string | null;
  email: string | null;
  clientId: string | null;
  /** Who approved the call, when it waited for a second person (`--approval-level`). */
  approvedBy: string | null;
}

/** Who a row is for beyond the identity's name: a person and their client, and who approved the call. */
export type AuditPeople = Partial<Pick<AuditRow, 'subject' | 'email' | 'clientId' | 'approvedBy'>>;

interface RawAuditRow {
  seq: number;
  call_id: string;
  started_at: number;
  finished_at: number | null;
  identity: string;
  tool: string;
  action: string;
  level: number;
  targets_json: string;
  arguments_json: string;
  outcome: AuditOutcome;
  error_code: string | null;
  duration_ms: number | null;
  note: string | null;
  source: string | null;
  reason: string | null;
  target_ids_json: string;
  broker_id: string | null;
  subject: string | null;
  email: string | null;
  client_id: string | null;
  approved_by: string | null;
}

function fromRaw(raw: RawAuditRow): AuditRow {
  return {
    seq: raw.seq,
    callId: raw.call_id,
    startedAt: raw.started_at,
    finishedAt: raw.finished_at,
    identity: raw.identity,
    tool: raw.tool,
    action: raw.action,
    level: raw.level,
    targets: JSON.parse(raw.targets_json) as string[],
    targetIds: JSON.parse(raw.target_ids_json) as string[],
    arguments: JSON.parse(raw.arguments_json) as Record<string, unknown>,
    outcome: raw.outcome,
    errorCode: raw.error_code,
    durationMs: raw.duration_ms,
    note: raw.note,
    source: raw.source,
    reason: raw.reason,
    brokerId: raw.broker_id,
    subject: raw.subject,
    email: raw.email,
    clientId: raw.client_id,
    approvedBy: raw.approved_by,
  };
}

/** Appends a note to what a row's note already says (SQL, for both engines). */
const APPEND_NOTE = "CASE WHEN note IS NULL OR note = '' THEN CAST(? AS TEXT) ELSE note || '; ' || CAST(? AS TEXT) END";

/**
 * The audit log: a row per call of level 1 or more, begun before the call is
 * sent and completed after; and a row per refusal (a tool above the caller's
 * level, a grant or confirmation missing, a bearer token refused).
 */
export class AuditTable {
  /**
   * @param brokerId in a cluster, this broker's id: written on the rows it
   * begins, so the others settle them if it dies before completing them
   */
  constructor(
    private readonly sql: SqlEngine,
    private readonly brokerId: string | undefined,
  ) {}

  /** Resolves once the row is committed: on either engine, nothing is sent before that. */
  async begin(
    row: Omit<
      AuditRow,
      'seq' | 'finishedAt' | 'durationMs' | 'note' | 'targetIds' | 'source' | 'reason' | 'brokerId' | 'subject' | 'email' | 'clientId' | 'approvedBy'
    > &
      Partial<Pick<AuditRow, 'targetIds' | 'source' | 'reason'>> &
      AuditPeople,
  ): Promise<void> {
    await this.sql.run(
      `INSERT INTO audit (call_id, started_at, identity, tool, action, level, targets_json, arguments_json, outcome, error_code, target_ids_json, source, reason, broker_id,
         subject, email, client_id, approved_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.callId,
        row.startedAt,
        row.identity,
        row.tool,
        row.action,
        row.level,
        JSON.stringify(row.targets),
        JSON.stringify(row.arguments),
        row.outcome,
        row.errorCode,
        JSON.stringify(row.targetIds ?? []),
        row.source ?? null,
        row.reason ?? null,
        this.brokerId ?? null,
        row.subject ?? null,
        row.email ?? null,
        row.clientId ?? null,
        row.approvedBy ?? null,
      ],
    );
  }

  /** Settles a row; a note is added to those already there (answers that came after the call gave up). */
  async complete(
    callId: string,
    fields: { outcome: AuditOutcome; errorCode: string | null; finishedAt: number; targets?: string[]; note?: string },
  ): Promise<void> {
    const note = fields.note ?? null;
    await this.sql.run(
      `UPDATE audit SET outcome = ?, error_code = ?, finished_at = ?, duration_ms = ? - started_at, targets_json = COALESCE(?, targets_json),
         note = CASE WHEN CAST(? AS TEXT) IS NULL THEN note ELSE ${APPEND_NOTE} END WHERE call_id = ?`,
      [
        fields.outcome,
        fields.errorCode,
        fields.finishedAt,
        fields.finishedAt,
        fields.targets ? JSON.stringify(fields.targets) : null,
        note,
        note,
        note,
        callId,
      ],
    );
  }

  /**
   * Adds to a row what an agent answered after the call gave up on it, where
   * the answer arrived: in a cluster, the broker holding the agent, which may
   * not be the one that began the row (nor alive any more). The outcome stays
   * what the calling broker settled.
   */
  async noteLate(callId: string, note: string): Promise<void> {
    await this.sql.run(`UPDATE audit SET note = ${APPEND_NOTE} WHERE call_id = ?`, [note, note, callId]);
  }

  /**
   * Rows left pending by a broker that stopped without completing them:
   * outcome `interrupted` (whether the change was made is not known).
   * `brokerIds` limits it to the rows of those brokers (in a cluster, one
   * that died, or this broker's own previous run); `except` to the rows of
   * brokers not among those still alive. Without either: every pending row
   * (a single broker starting).
   */
  markInterrupted(now: number, scope: BrokerScope & { note?: string } = {}): Promise<number> {
    const where = ["outcome = 'pending'"];
    const args: SqlValue[] = [now, scope.note ?? null, scope.note ?? null, scope.note ?? null];
    if (!whereBrokers(scope, where, args)) return Promise.resolve(0);
    return this.sql.run(
      `UPDATE audit SET outcome = 'interrupted', finished_at = ?,
         note = CASE WHEN CAST(? AS TEXT) IS NULL THEN note ELSE ${APPEND_NOTE} END WHERE ${where.join(' AND ')}`,
      args,
    );
  }

  /** One row by its call id. */
  async get(callId: string): Promise<AuditRow | undefined> {
    const raw = await this.sql.get<RawAuditRow>('SELECT * FROM audit WHERE call_id = ?', [callId]);
    return raw && fromRaw(raw);
  }

  async recent(options: {
    limit: number;
    identity?: string;
    since?: number;
    until?: number;
    refused?: boolean;
    tool?: string;
    outcome?: AuditOutcome;
  }): Promise<AuditRow[]> {
    const where: string[] = [];
    const args: SqlValue[] = [];
    if (options.refused) where.push("outcome = 'refused'");
    if (options.outcome) {
      where.push('outcome = ?');
      args.push(options.outcome);
    }
    if (options.tool) {
      where.push('tool = ?');
      args.push(options.tool);
    }
    if (options.until !== undefined) {
      where.push('started_at < ?');
      args.push(options.until);
    }
    if (options.identity) {
      where.push('identity = ?');
      args.push(options.identity);
    }
    if (options.since !== undefined) {
      where.push('started_at >= ?');
      args.push(options.since);
    }
    const sql = `SELECT * FROM audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
    return (await this.sql.all<RawAuditRow>(sql, [...args, options.limit])).map(fromRaw);
  }
}
