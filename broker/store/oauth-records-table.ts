import type { SqlEngine } from './sql-engine.ts';

/** One record of the built-in authorization server (a client, grant, code, refresh token, session, interaction, its keys…). */
export interface OAuthRecord {
  payload: Record<string, unknown>;
  /** When it was consumed (codes, rotated refresh tokens), or null. */
  consumedAt: number | null;
}

/**
 * What the built-in authorization server keeps, by model and id, in the
 * broker's store: every broker of a cluster reads the same clients, grants
 * and tokens, so any of them serves the one issuer. Expired records are
 * never returned and are swept now and then.
 */
export class OAuthRecordsTable {
  constructor(private readonly sql: SqlEngine) {}

  async upsert(model: string, id: string, payload: Record<string, unknown>, expiresAt: number | null): Promise<void> {
    const text = (key: string) => (typeof payload[key] === 'string' ? (payload[key] as string) : null);
    await this.sql.run(
      `INSERT INTO oauth_records (model, id, payload_json, grant_id, user_code, uid, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (model, id) DO UPDATE SET payload_json = excluded.payload_json, grant_id = excluded.grant_id, user_code = excluded.user_code,
         uid = excluded.uid, expires_at = excluded.expires_at`,
      [model, id, JSON.stringify(payload), text('grantId'), text('userCode'), text('uid'), expiresAt],
    );
  }

  /** Writes the record only if none has its id; resolves to the one kept (another broker's, if it was first). */
  async insertFirst(model: string, id: string, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.sql.run('INSERT INTO oauth_records (model, id, payload_json) VALUES (?, ?, ?) ON CONFLICT (model, id) DO NOTHING', [
      model,
      id,
      JSON.stringify(payload),
    ]);
    return (await this.find(model, id, Date.now()))?.payload ?? payload;
  }

  async find(model: string, id: string, now: number): Promise<OAuthRecord | undefined> {
    return this.one('SELECT payload_json, consumed_at FROM oauth_records WHERE model = ? AND id = ? AND (expires_at IS NULL OR expires_at > ?)', [
      model,
      id,
      now,
    ]);
  }

  async findBy(model: string, column: 'uid' | 'user_code', value: string, now: number): Promise<OAuthRecord | undefined> {
    return this.one(`SELECT payload_json, consumed_at FROM oauth_records WHERE model = ? AND ${column} = ? AND (expires_at IS NULL OR expires_at > ?)`, [
      model,
      value,
      now,
    ]);
  }

  async consume(model: string, id: string, now: number): Promise<void> {
    await this.sql.run('UPDATE oauth_records SET consumed_at = ? WHERE model = ? AND id = ?', [now, model, id]);
  }

  async destroy(model: string, id: string): Promise<void> {
    await this.sql.run('DELETE FROM oauth_records WHERE model = ? AND id = ?', [model, id]);
  }

  /** Everything issued under a grant (codes, refresh tokens, the grant itself): a revoked grant, or a refresh token used twice. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.sql.run('DELETE FROM oauth_records WHERE grant_id = ?', [grantId]);
  }

  /** Removes what expired before `now`. */
  async prune(now: number): Promise<number> {
    return this.sql.run('DELETE FROM oauth_records WHERE expires_at IS NOT NULL AND expires_at <= ?', [now]);
  }

  private async one(sql: string, params: (string | number)[]): Promise<OAuthRecord | undefined> {
    const row = await this.sql.get<{ payload_json: string; consumed_at: number | null }>(sql, params);
    return row && { payload: JSON.parse(row.payload_json) as Record<string, unknown>, consumedAt: row.consumed_at === null ? null : Number(row.consumed_at) };
  }
}
