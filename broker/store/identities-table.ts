import type { Level } from '../../shared/catalog/action.ts';
import type { SqlEngine } from './sql-engine.ts';

interface IdentityRow {
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
  constructor(private readonly sql: SqlEngine) {}

  async insert(row: Omit<IdentityRow, 'lastUsedAt' | 'revokedAt'>): Promise<void> {
    await this.sql.run('INSERT INTO identities (id, name, secret_sha256, level, grants_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      row.id,
      row.name,
      row.secretSha256,
      row.level,
      JSON.stringify(row.grants),
      row.createdAt,
      row.expiresAt,
    ]);
  }

  async get(id: string): Promise<IdentityRow | undefined> {
    const raw = await this.sql.get<RawIdentityRow>('SELECT * FROM identities WHERE id = ?', [id]);
    return raw ? fromRaw(raw) : undefined;
  }

  async findLiveByName(name: string): Promise<IdentityRow | undefined> {
    const raw = await this.sql.get<RawIdentityRow>('SELECT * FROM identities WHERE name = ? AND revoked_at IS NULL', [name]);
    return raw ? fromRaw(raw) : undefined;
  }

  async list(options: { includeRevoked: boolean } = { includeRevoked: false }): Promise<IdentityRow[]> {
    const sql = options.includeRevoked ? 'SELECT * FROM identities ORDER BY name' : 'SELECT * FROM identities WHERE revoked_at IS NULL ORDER BY name';
    return (await this.sql.all<RawIdentityRow>(sql)).map(fromRaw);
  }

  async touch(id: string, now: number): Promise<void> {
    await this.sql.run('UPDATE identities SET last_used_at = ? WHERE id = ?', [now, id]);
  }

  async extend(id: string, expiresAt: number): Promise<void> {
    await this.sql.run('UPDATE identities SET expires_at = ? WHERE id = ?', [expiresAt, id]);
  }

  /** The identities revoked at or after `sinceMs` (by the clock of whoever revoked them): what live sessions must learn. */
  async revokedSince(sinceMs: number): Promise<string[]> {
    return (await this.sql.all<{ id: string }>('SELECT id FROM identities WHERE revoked_at >= ?', [sinceMs])).map((row) => row.id);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    return (await this.sql.run('UPDATE identities SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, id])) > 0;
  }
}
