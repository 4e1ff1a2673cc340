import type { SqlEngine, SqlValue } from './sql-engine.ts';

/** `pending` until another identity approves or denies it, it expires, or its caller gives up (`withdrawn`). */
export type ApprovalState = 'pending' | 'approved' | 'denied' | 'expired' | 'withdrawn';

/** A call waiting for a second person: who called, exactly what it would do, and what became of it. */
export interface ApprovalRow {
  id: string;
  /** The call's audit row, once it has one (the same id). */
  callId: string;
  identityId: string;
  identity: string;
  /** The caller's subject, when OAuth proved them. */
  subject: string | null;
  tool: string;
  action: string;
  level: number;
  targets: string[];
  /** The arguments as the audit keeps them (sensitive values redacted). */
  arguments: Record<string, unknown>;
  /** Of the arguments as called: what was approved is what runs. */
  argumentsSha256: string;
  state: ApprovalState;
  createdAt: number;
  expiresAt: number;
  decidedBy: string | null;
  decidedAt: number | null;
  reason: string | null;
}

interface RawApprovalRow {
  id: string;
  call_id: string;
  identity_id: string;
  identity: string;
  subject: string | null;
  tool: string;
  action: string;
  level: number;
  targets_json: string;
  arguments_json: string;
  arguments_sha256: string;
  state: ApprovalState;
  created_at: number;
  expires_at: number;
  decided_by: string | null;
  decided_at: number | null;
  reason: string | null;
}

const fromRaw = (raw: RawApprovalRow): ApprovalRow => ({
  id: raw.id,
  callId: raw.call_id,
  identityId: raw.identity_id,
  identity: raw.identity,
  subject: raw.subject,
  tool: raw.tool,
  action: raw.action,
  level: Number(raw.level),
  targets: JSON.parse(raw.targets_json) as string[],
  arguments: JSON.parse(raw.arguments_json) as Record<string, unknown>,
  argumentsSha256: raw.arguments_sha256,
  state: raw.state,
  createdAt: Number(raw.created_at),
  expiresAt: Number(raw.expires_at),
  decidedBy: raw.decided_by,
  decidedAt: raw.decided_at === null ? null : Number(raw.decided_at),
  reason: raw.reason,
});

/** Calls waiting for a second person's approval (`--approval-level`, `--approval-tools`), kept in the store so any broker, the console and the CLI see them. */
export class ApprovalsTable {
  constructor(private readonly sql: SqlEngine) {}

  async insert(row: Omit<ApprovalRow, 'state' | 'decidedBy' | 'decidedAt' | 'reason'>): Promise<void> {
    await this.sql.run(
      `INSERT INTO approvals (id, call_id, identity_id, identity, subject, tool, action, level, targets_json, arguments_json, arguments_sha256, state, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      [
        row.id,
        row.callId,
        row.identityId,
        row.identity,
        row.subject,
        row.tool,
        row.action,
        row.level,
        JSON.stringify(row.targets),
        JSON.stringify(row.arguments),
        row.argumentsSha256,
        row.createdAt,
        row.expiresAt,
      ],
    );
  }

  async get(id: string): Promise<ApprovalRow | undefined> {
    const raw = await this.sql.get<RawApprovalRow>('SELECT * FROM approvals WHERE id = ?', [id]);
    return raw && fromRaw(raw);
  }

  /** Newest first; `pending` only those still waiting (and not past their expiry). */
  async list(options: { pending: boolean; limit: number; now: number }): Promise<ApprovalRow[]> {
    const where = options.pending ? "WHERE state = 'pending' AND expires_at > ?" : '';
    const args: SqlValue[] = options.pending ? [options.now, options.limit] : [options.limit];
    return (await this.sql.all<RawApprovalRow>(`SELECT * FROM approvals ${where} ORDER BY created_at DESC LIMIT ?`, args)).map(fromRaw);
  }

  /** Settles a pending approval, unless it was settled or expired first; resolves whether this did. */
  async decide(id: string, state: Exclude<ApprovalState, 'pending'>, fields: { by: string | null; at: number; reason: string | null }): Promise<boolean> {
    const unexpired = state === 'approved' || state === 'denied' ? ' AND expires_at > ?' : '';
    const args: SqlValue[] = [state, fields.by, fields.at, fields.reason, id, ...(unexpired ? [fields.at] : [])];
    return (
      (await this.sql.run(`UPDATE approvals SET state = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ? AND state = 'pending'${unexpired}`, args)) >
      0
    );
  }
}
