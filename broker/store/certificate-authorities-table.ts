import type { SqlEngine } from './sql-engine.ts';

/** Where a CA stands: the one that signs and is trusted, the one a rotation brings in, or one rotated out. */
export type CaState = 'active' | 'next' | 'retired';

/**
 * A certificate authority of the fleet, by its pin. Its private key is here
 * only sealed with the operator's CA key secret (ca-key-seal.ts); without a
 * secret a single broker keeps it as a file of its data dir (mode 0600) and a
 * cluster's brokers hold it as the operator's files. `crossCertificatePem`
 * certifies this CA's key with the CA it replaces, so an agent that trusts
 * only the old one still verifies a broker serving from the new one.
 */
export interface CaRow {
  pin: string;
  certificatePem: string;
  keySealed: string | null;
  crossCertificatePem: string | null;
  state: CaState;
  createdAt: number;
  retiredAt: number | null;
}

interface RawRow {
  pin: string;
  certificate_pem: string;
  key_sealed: string | null;
  cross_certificate_pem: string | null;
  state: CaState;
  created_at: number | string;
  retired_at: number | string | null;
}

function fromRaw(raw: RawRow): CaRow {
  return {
    pin: raw.pin,
    certificatePem: raw.certificate_pem,
    keySealed: raw.key_sealed,
    crossCertificatePem: raw.cross_certificate_pem,
    state: raw.state,
    createdAt: Number(raw.created_at),
    retiredAt: raw.retired_at === null ? null : Number(raw.retired_at),
  };
}

/** The fleet's CAs: one active, at most one next, and those rotated out. */
export class CertificateAuthoritiesTable {
  constructor(private readonly sql: SqlEngine) {}

  async list(): Promise<CaRow[]> {
    return (await this.sql.all<RawRow>('SELECT * FROM certificate_authorities ORDER BY created_at')).map(fromRaw);
  }

  async insert(row: Omit<CaRow, 'retiredAt'>): Promise<void> {
    await this.sql.run(
      'INSERT INTO certificate_authorities (pin, certificate_pem, key_sealed, cross_certificate_pem, state, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      [row.pin, row.certificatePem, row.keySealed, row.crossCertificatePem, row.state, row.createdAt],
    );
  }

  async setState(pin: string, state: CaState, at: number): Promise<void> {
    await this.sql.run('UPDATE certificate_authorities SET state = ?, retired_at = ? WHERE pin = ?', [state, state === 'retired' ? at : null, pin]);
  }

  /** Seals a CA's key here (given a secret for the first time). */
  async setSealedKey(pin: string, keySealed: string): Promise<void> {
    await this.sql.run('UPDATE certificate_authorities SET key_sealed = ? WHERE pin = ?', [keySealed, pin]);
  }

  async remove(pin: string): Promise<void> {
    await this.sql.run('DELETE FROM certificate_authorities WHERE pin = ?', [pin]);
  }
}
