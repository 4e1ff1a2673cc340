import type Database from 'better-sqlite3';

export interface CertificateRow {
  serial: string;
  agentId: string;
  issuedAt: number;
  notBefore: number;
  notAfter: number;
  publicKeySha256: string;
  issuedBy: 'enroll' | 'renew';
}

export interface RevocationRow {
  serial: string;
  agentId: string;
  revokedAt: number;
  reason: string;
}

/** Every client certificate the broker issued, and the serials it revoked. */
export class CertificatesTable {
  constructor(private readonly db: Database.Database) {}

  insert(row: CertificateRow): void {
    this.db
      .prepare('INSERT INTO certificates (serial, agent_id, issued_at, not_before, not_after, public_key_sha256, issued_by) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(row.serial, row.agentId, row.issuedAt, row.notBefore, row.notAfter, row.publicKeySha256, row.issuedBy);
  }

  get(serial: string): CertificateRow | undefined {
    const raw = this.db.prepare('SELECT * FROM certificates WHERE serial = ?').get(serial) as
      | { serial: string; agent_id: string; issued_at: number; not_before: number; not_after: number; public_key_sha256: string; issued_by: 'enroll' | 'renew' }
      | undefined;
    if (!raw) return undefined;
    return {
      serial: raw.serial,
      agentId: raw.agent_id,
      issuedAt: raw.issued_at,
      notBefore: raw.not_before,
      notAfter: raw.not_after,
      publicKeySha256: raw.public_key_sha256,
      issuedBy: raw.issued_by,
    };
  }

  /** Revokes every certificate of an agent that is not revoked yet; returns the serials. */
  revokeAllOf(agentId: string, reason: string, now: number): string[] {
    const serials = (
      this.db.prepare('SELECT serial FROM certificates WHERE agent_id = ? AND serial NOT IN (SELECT serial FROM revocations)').all(agentId) as {
        serial: string;
      }[]
    ).map((row) => row.serial);
    const insert = this.db.prepare('INSERT INTO revocations (serial, agent_id, revoked_at, reason) VALUES (?, ?, ?, ?)');
    for (const serial of serials) insert.run(serial, agentId, now, reason);
    return serials;
  }

  revocation(serial: string): RevocationRow | undefined {
    const raw = this.db.prepare('SELECT * FROM revocations WHERE serial = ?').get(serial) as
      | { serial: string; agent_id: string; revoked_at: number; reason: string }
      | undefined;
    return raw ? { serial: raw.serial, agentId: raw.agent_id, revokedAt: raw.revoked_at, reason: raw.reason } : undefined;
  }

  revokedSerials(): Set<string> {
    return new Set((this.db.prepare('SELECT serial FROM revocations').all() as { serial: string }[]).map((row) => row.serial));
  }
}
