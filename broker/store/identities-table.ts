import type { Level } from '../../shared/catalog/action.ts';
import type { ToolGlobs } from '../auth/tool-filter.ts';
import type { SqlEngine } from './sql-engine.ts';

/** `token`: holds a bearer token of its own (fmc1.…); `person`: someone signed in through OAuth, mapped by the operator's rules. */
export type IdentityKind = 'token' | 'person';

export interface IdentityRow {
  id: string;
  name: string;
  kind: IdentityKind;
  secretSha256: string;
  level: Level;
  grants: string[];
  /** The tools switched off for this identity (its own, or a person's mapping rule's). */
  tools: ToolGlobs;
  /** A person's: the issuer that knows them, their subject there, their email if it said. */
  issuer: string | null;
  subject: string | null;
  email: string | null;
  createdAt: number;
  expiresAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** What a person's row says of them: written again when a request finds it changed. */
export type PersonFacts = Pick<IdentityRow, 'name' | 'level' | 'grants' | 'tools' | 'email' | 'expiresAt'>;

interface RawIdentityRow {
  id: string;
  name: string;
  secret_sha256: string;
  level: number;
  grants_json: string;
  kind: string;
  tools_json: string;
  issuer: string | null;
  subject: string | null;
  email: string | null;
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
    kind: raw.kind === 'person' ? 'person' : 'token',
    tools: { disable: [], enable: [], ...(JSON.parse(raw.tools_json) as Partial<ToolGlobs>) },
    issuer: raw.issuer,
    subject: raw.subject,
    email: raw.email,
    createdAt: raw.created_at,
    expiresAt: raw.expires_at,
    lastUsedAt: raw.last_used_at,
    revokedAt: raw.revoked_at,
  };
}

/** MCP client identities; a bearer token is stored as the hash of its secret only. */
export class IdentitiesTable {
  constructor(private readonly sql: SqlEngine) {}

  async insert(
    row: Omit<IdentityRow, 'lastUsedAt' | 'revokedAt' | 'kind' | 'tools' | 'issuer' | 'subject' | 'email'> &
      Partial<Pick<IdentityRow, 'kind' | 'tools' | 'issuer' | 'subject' | 'email'>>,
  ): Promise<void> {
    await this.sql.run(
      'INSERT INTO identities (id, name, secret_sha256, level, grants_json, created_at, expires_at, kind, tools_json, issuer, subject, email) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        row.id,
        row.name,
        row.secretSha256,
        row.level,
        JSON.stringify(row.grants),
        row.createdAt,
        row.expiresAt,
        row.kind ?? 'token',
        JSON.stringify(row.tools ?? { disable: [], enable: [] }),
        row.issuer ?? null,
        row.subject ?? null,
        row.email ?? null,
      ],
    );
  }

  /** Writes again what a person's row says of them (the rule that maps them, their email, their latest token's expiry). */
  async updatePerson(id: string, facts: PersonFacts): Promise<void> {
    await this.sql.run('UPDATE identities SET name = ?, level = ?, grants_json = ?, tools_json = ?, email = ?, expires_at = ? WHERE id = ?', [
      facts.name,
      facts.level,
      JSON.stringify(facts.grants),
      JSON.stringify(facts.tools),
      facts.email,
      facts.expiresAt,
      id,
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

  /** A person's identity, by the issuer that knows them and their subject there, revoked or not. */
  async findPerson(issuer: string, subject: string): Promise<IdentityRow | undefined> {
    const raw = await this.sql.get<RawIdentityRow>("SELECT * FROM identities WHERE kind = 'person' AND issuer = ? AND subject = ?", [issuer, subject]);
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
