import type { SqlEngine } from './sql-engine.ts';

/** One console sign-in as the store keeps it: the session id only as its hash. */
export interface WebSessionRow {
  idSha256: string;
  identityId: string;
  csrfToken: string;
  /** The console origin the browser signed in from: the session answers there only. */
  origin: string;
  openedAt: number;
  /** Orders the sign-ins one broker opens within the same millisecond. */
  openedSeq: number;
  expiresAt: number;
}

interface RawRow {
  id_sha256: string;
  identity_id: string;
  csrf_token: string;
  origin: string;
  opened_at: number | string;
  opened_seq: number | string;
  expires_at: number | string;
}

/** The console's sign-ins, shared by every broker on the store. */
export class WebSessionsTable {
  constructor(private readonly sql: SqlEngine) {}

  /** Adds a sign-in, then ends its identity's oldest ones past `keep`, and every expired one. */
  async insert(row: WebSessionRow, keep: number, now: number): Promise<void> {
    await this.sql.transaction(async () => {
      await this.sql.run(
        'INSERT INTO web_sessions (id_sha256, identity_id, csrf_token, origin, opened_at, opened_seq, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [row.idSha256, row.identityId, row.csrfToken, row.origin, row.openedAt, row.openedSeq, row.expiresAt],
      );
      // LIMIT before OFFSET is how both engines spell "every row after the first `keep`".
      await this.sql.run(
        `DELETE FROM web_sessions WHERE id_sha256 IN (
           SELECT id_sha256 FROM web_sessions WHERE identity_id = ? ORDER BY opened_at DESC, opened_seq DESC LIMIT 1000000 OFFSET ?)`,
        [row.identityId, keep],
      );
      await this.sql.run('DELETE FROM web_sessions WHERE expires_at <= ?', [now]);
    });
  }

  /** The sign-in whose session id hashes to `idSha256`, unless it has expired. */
  async get(idSha256: string, now: number): Promise<WebSessionRow | undefined> {
    const row = await this.sql.get<RawRow>('SELECT * FROM web_sessions WHERE id_sha256 = ? AND expires_at > ?', [idSha256, now]);
    return (
      row && {
        idSha256: row.id_sha256,
        identityId: row.identity_id,
        csrfToken: row.csrf_token,
        origin: row.origin,
        openedAt: Number(row.opened_at),
        openedSeq: Number(row.opened_seq),
        expiresAt: Number(row.expires_at),
      }
    );
  }

  async delete(idSha256: string): Promise<void> {
    await this.sql.run('DELETE FROM web_sessions WHERE id_sha256 = ?', [idSha256]);
  }
}
