import type Database from 'better-sqlite3';
import type { Level } from '../../shared/catalog/action.ts';

export interface IdentityRow {
  id: string;
  name: string;
  secretSha256: string;
  level: Level;
  grants: string[];
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

interface RawIdentityRow {
  id: string;
  name: string;
  secret_sha256: string;
  level: number;
  grants_json: string;
  created_at: number;
  expires_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

function fromRaw(raw: RawIdentityRow): IdentityRow {
  return {
    id: raw.id,
    name: raw.name,
    secretSha256: raw.secret_sha256,
    level: raw.level as Level,
    grants: JSON.parse(raw.grants_json) as string[],
    createdAt: raw.created_at,
    expiresAt: raw.expires_at,
    lastUsedAt: raw.last_used_at,
    revokedAt: raw.revoked_at,
  };
}

/** MCP client identities; a bearer token is stored as the hash of its secret only. */
export class IdentitiesTable {
  constructor(private readonly db: Database.Database) {}

  insert(row: Omit<IdentityRow, 'lastUsedAt' | 'revokedAt'>): void {
    this.db
      .prepare('INSERT INTO identities (id, name, secret_sha256, level, grants_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.name, row.secretSha256, row.level, JSON.stringify(row.grants), row.createdAt, row.expiresAt);
  }

  get(id: string): IdentityRow | undefined {
    const raw = this.db.prepare('SELECT * FROM identities WHERE id = ?').get(id) as RawIdentityRow | undefined;
    return raw ? fromRaw(raw) : undefined;
  }

  findLiveByName(name: string): IdentityRow | undefined {
    const raw = this.db.prepare('SELECT * FROM identities WHERE name = ? AND revoked_at IS NULL').get(name) as RawIdentityRow | undefined;
    return raw ? fromRaw(raw) : undefined;
  }

  list(options: { includeRevoked: boolean } = { includeRevoked: false }): IdentityRow[] {
    const sql = options.includeRevoked ? 'SELECT * FROM identities ORDER BY name' : 'SELECT * FROM identities WHERE revoked_at IS NULL ORDER BY name';
    return (this.db.prepare(sql).all() as RawIdentityRow[]).map(fromRaw);
  }

  touch(id: string, now: number): void {
    this.db.prepare('UPDATE identities SET last_used_at = ? WHERE id = ?').run(now, id);
  }

  extend(id: string, expiresAt: number): void {
    this.db.prepare('UPDATE identities SET expires_at = ? WHERE id = ?').run(expiresAt, id);
  }

  revoke(id: string, now: number): boolean {
    return this.db.prepare('UPDATE identities SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now, id).changes > 0;
  }
}
