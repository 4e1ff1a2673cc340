import type { SqlEngine } from './sql-engine.ts';

interface CertificateRow {
  serial: string;
  agentId: string;
  issuedAt: number;
  notBefore: number;
  notAfter: number;
  publicKeySha256: string;
  issuedBy: 'enroll' | 'renew';
  /** The pin of the CA that issued it (null for certificates issued before CAs were recorded: the first CA's). */
  caPin: string | null;
}

interface RawCertificateRow {
  serial: string;
  agent_id: string;
  issued_at: number;
  not_before: number;
  not_after: number;
  public_key_sha256: string;
  issued_by: 'enroll' | 'renew';
  ca_pin: string | null;
}

function fromRaw(raw: RawCertificateRow): CertificateRow {
  return {
    serial: raw.serial,
    agentId: raw.agent_id,
    issuedAt: raw.issued_at,
    notBefore: raw.not_before,
    notAfter: raw.not_after,
    publicKeySha256: raw.public_key_sha256,
    issuedBy: raw.issued_by,
    caPin: raw.ca_pin,
  };
}

/** Every client certificate the broker issued, and the serials it revoked. */
export class CertificatesTable {
  constructor(private readonly sql: SqlEngine) {}

  async insert(row: CertificateRow): Promise<void> {
    await this.sql.run(
      'INSERT INTO certificates (serial, agent_id, issued_at, not_before, not_after, public_key_sha256, issued_by, ca_pin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [row.serial, row.agentId, row.issuedAt, row.notBefore, row.notAfter, row.publicKeySha256, row.issuedBy, row.caPin],
    );
  }

  async get(serial: string): Promise<CertificateRow | undefined> {
    const raw = await this.sql.get<RawCertificateRow>('SELECT * FROM certificates WHERE serial = ?', [serial]);
    return raw ? fromRaw(raw) : undefined;
  }

  /**
   * A certificate and when it was revoked (null if it was not), in one
   * statement: every agent stream that opens asks, thousands at once when a
   * fleet comes back.
   */
  async withRevocation(serial: string): Promise<(CertificateRow & { revokedAt: number | null }) | undefined> {
    const raw = await this.sql.get<RawCertificateRow & { revocation_revoked_at: number | null }>(
      'SELECT certificates.*, revocations.revoked_at AS revocation_revoked_at FROM certificates LEFT JOIN revocations ON revocations.serial = certificates.serial WHERE certificates.serial = ?',
      [serial],
    );
    return raw ? { ...fromRaw(raw), revokedAt: raw.revocation_revoked_at } : undefined;
  }

  /** Certificates issued before CAs were recorded belong to the first CA: recorded as such once it is known. */
  async assignUnrecordedTo(caPin: string): Promise<void> {
    await this.sql.run('UPDATE certificates SET ca_pin = ? WHERE ca_pin IS NULL', [caPin]);
  }

  /** Each live agent's current certificate: its CA's pin, when it was issued and when it expires. */
  async currentByAgent(): Promise<Map<string, { caPin: string | null; issuedAt: number; notAfter: number }>> {
    const rows = await this.sql.all<{ id: string; ca_pin: string | null; issued_at: number | string; not_after: number | string }>(
      `SELECT agents.id AS id, certificates.ca_pin AS ca_pin, certificates.issued_at AS issued_at, certificates.not_after AS not_after
       FROM agents JOIN certificates ON certificates.serial = agents.cert_serial WHERE agents.revoked_at IS NULL`,
    );
    return new Map(rows.map((row) => [row.id, { caPin: row.ca_pin, issuedAt: Number(row.issued_at), notAfter: Number(row.not_after) }]));
  }

  /** Revokes every certificate of an agent that is not revoked yet; returns the serials. */
  async revokeAllOf(agentId: string, reason: string, now: number): Promise<string[]> {
    const rows = await this.sql.all<{ serial: string }>(
      'SELECT serial FROM certificates WHERE agent_id = ? AND serial NOT IN (SELECT serial FROM revocations) ORDER BY issued_at',
      [agentId],
    );
    const serials = rows.map((row) => row.serial);
    for (const serial of serials)
      await this.sql.run('INSERT INTO revocations (serial, agent_id, revoked_at, reason) VALUES (?, ?, ?, ?)', [serial, agentId, now, reason]);
    return serials;
  }

  async revokedSerials(): Promise<Set<string>> {
    return new Set((await this.sql.all<{ serial: string }>('SELECT serial FROM revocations')).map((row) => row.serial));
  }
}
