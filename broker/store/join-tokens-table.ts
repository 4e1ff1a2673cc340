import type Database from 'better-sqlite3';
import type { AgentRole } from './agent-roles-table.ts';

export interface JoinTokenRow {
  id: string;
  secretSha256: string;
  createdAt: number;
  expiresAt: number;
  /** null: reusable until it expires. */
  usesAllowed: number | null;
  uses: number;
  labels: Record<string, string>;
  /** Roles every agent enrolled with it holds over whatever swarm or cluster it manages. */
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
  constructor(private readonly db: Database.Database) {}

  insert(row: Omit<JoinTokenRow, 'uses' | 'lastUsedAt' | 'revokedAt'>): void {
    this.db
      .prepare('INSERT INTO join_tokens (id, secret_sha256, created_at, expires_at, uses_allowed, labels_json, roles_json) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.secretSha256, row.createdAt, row.expiresAt, row.usesAllowed, JSON.stringify(row.labels), JSON.stringify(row.roles));
  }

  get(id: string): JoinTokenRow | undefined {
    const raw = this.db.prepare('SELECT * FROM join_tokens WHERE id = ?').get(id) as RawJoinTokenRow | undefined;
    return raw ? fromRaw(raw) : undefined;
  }

  list(): JoinTokenRow[] {
    return (this.db.prepare('SELECT * FROM join_tokens ORDER BY created_at').all() as RawJoinTokenRow[]).map(fromRaw);
  }

  recordUse(id: string, now: number): void {
    this.db.prepare('UPDATE join_tokens SET uses = uses + 1, last_used_at = ? WHERE id = ?').run(now, id);
  }

  extend(id: string, expiresAt: number): void {
    this.db.prepare('UPDATE join_tokens SET expires_at = ? WHERE id = ?').run(expiresAt, id);
  }

  revoke(id: string, now: number): boolean {
    return this.db.prepare('UPDATE join_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id).changes > 0;
  }
}
