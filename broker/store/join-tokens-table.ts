import type { AgentRole } from './agent-roles-table.ts';
import type { SqlEngine } from './sql-engine.ts';

export interface JoinTokenRow {
  id: string;
  secretSha256: string;
  createdAt: number;
  expiresAt: number;
  /** null: reusable until it expires. */
  usesAllowed: number | null;
  uses: number;
  labels: Record<string, string>;
  /** Roles every agent enrolled with it holds over whatever shared object it manages. */
  roles: AgentRole[];
  lastUsedAt: number | null;
  revokedAt: number | null;
}

interface RawJoinTokenRow {
  id: string;
  secret_sha256: string;
  created_at: number;
  expires_at: number;
  uses_allowed: number | null;
  uses: number;
  labels_json: string;
  roles_json: string;
  last_used_at: number | null;
  revoked_at: number | null;
}

function fromRaw(raw: RawJoinTokenRow): JoinTokenRow {
  return {
    id: raw.id,
    secretSha256: raw.secret_sha256,
    createdAt: raw.created_at,
    expiresAt: raw.expires_at,
    usesAllowed: raw.uses_allowed,
    uses: raw.uses,
    labels: JSON.parse(raw.labels_json) as Record<string, string>,
    roles: JSON.parse(raw.roles_json) as AgentRole[],
    lastUsedAt: raw.last_used_at,
    revokedAt: raw.revoked_at,
  };
}

/** Join tokens, stored by id with the hash of their secret; the secret itself is never stored. */
export class JoinTokensTable {
  constructor(private readonly sql: SqlEngine) {}

  async insert(row: Omit<JoinTokenRow, 'uses' | 'lastUsedAt' | 'revokedAt'>): Promise<void> {
    await this.sql.run(
      'INSERT INTO join_tokens (id, secret_sha256, created_at, expires_at, uses_allowed, labels_json, roles_json) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [row.id, row.secretSha256, row.createdAt, row.expiresAt, row.usesAllowed, JSON.stringify(row.labels), JSON.stringify(row.roles)],
    );
  }

  async get(id: string): Promise<JoinTokenRow | undefined> {
    const raw = await this.sql.get<RawJoinTokenRow>('SELECT * FROM join_tokens WHERE id = ?', [id]);
    return raw ? fromRaw(raw) : undefined;
  }

  async list(): Promise<JoinTokenRow[]> {
    return (await this.sql.all<RawJoinTokenRow>('SELECT * FROM join_tokens ORDER BY created_at, id')).map(fromRaw);
  }

  async recordUse(id: string, now: number): Promise<void> {
    await this.sql.run('UPDATE join_tokens SET uses = uses + 1, last_used_at = ? WHERE id = ?', [now, id]);
  }

  async extend(id: string, expiresAt: number): Promise<void> {
    await this.sql.run('UPDATE join_tokens SET expires_at = ? WHERE id = ?', [expiresAt, id]);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    return (await this.sql.run('UPDATE join_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, id])) > 0;
  }
}
