import type { SqlEngine } from './sql-engine.ts';

/**
 * A broker of the cluster as it registered on the store when it started: the
 * certificate the fleet CA gave it, and the keys it speaks with on the bus,
 * bound to that certificate by `binding` (broker/cluster/bus-keys.ts). Other
 * brokers believe a bus message only when it checks out against a row here.
 */
export interface BrokerRow {
  brokerId: string;
  /** The RSA key the broker's certificate is for, which signs `binding`. */
  publicKeyPem: string;
  /** From the fleet CA, naming the broker id; null until the broker that signs gives it. */
  certificatePem: string | null;
  /** Ed25519 public key (SPKI DER, base64) that signs its bus messages. */
  signingKey: string;
  /** X25519 public key (SPKI DER, base64) others seal messages to. */
  agreementKey: string;
  /** RSA-SHA256 signature (base64) of the certificate's key over the broker id and both keys. */
  binding: string;
  startedAt: number;
  /** When it said it was shutting down; null while it runs (or if it died). */
  stoppedAt: number | null;
  /** When the operator removed it (`fleetmesh brokers remove`): its messages are dropped from then on. */
  removedAt: number | null;
}

interface RawRow {
  broker_id: string;
  public_key_pem: string;
  certificate_pem: string | null;
  signing_key: string;
  agreement_key: string;
  binding: string;
  started_at: number | string;
  stopped_at: number | string | null;
  removed_at: number | string | null;
}

const orNull = (value: number | string | null) => (value === null ? null : Number(value));

function fromRaw(raw: RawRow): BrokerRow {
  return {
    brokerId: raw.broker_id,
    publicKeyPem: raw.public_key_pem,
    certificatePem: raw.certificate_pem,
    signingKey: raw.signing_key,
    agreementKey: raw.agreement_key,
    binding: raw.binding,
    startedAt: Number(raw.started_at),
    stoppedAt: orNull(raw.stopped_at),
    removedAt: orNull(raw.removed_at),
  };
}

/** The brokers registered on a shared store (a broker on its own registers nothing). */
export class BrokersTable {
  constructor(private readonly sql: SqlEngine) {}

  /** Registers a starting broker, replacing what an earlier run under the same id registered; refuses (false) an id the operator removed. */
  async register(row: Omit<BrokerRow, 'stoppedAt' | 'removedAt'>): Promise<boolean> {
    const changed = await this.sql.run(
      `INSERT INTO brokers (broker_id, public_key_pem, certificate_pem, signing_key, agreement_key, binding, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (broker_id) DO UPDATE SET public_key_pem = excluded.public_key_pem, certificate_pem = excluded.certificate_pem,
         signing_key = excluded.signing_key, agreement_key = excluded.agreement_key, binding = excluded.binding, started_at = excluded.started_at,
         stopped_at = NULL
       WHERE brokers.removed_at IS NULL`,
      [row.brokerId, row.publicKeyPem, row.certificatePem, row.signingKey, row.agreementKey, row.binding, row.startedAt],
    );
    return changed > 0;
  }

  async get(brokerId: string): Promise<BrokerRow | undefined> {
    const raw = await this.sql.get<RawRow>('SELECT * FROM brokers WHERE broker_id = ?', [brokerId]);
    return raw ? fromRaw(raw) : undefined;
  }

  async list(): Promise<BrokerRow[]> {
    return (await this.sql.all<RawRow>('SELECT * FROM brokers ORDER BY broker_id')).map(fromRaw);
  }

  /** Gives a broker's key its certificate (the signing broker does, for those waiting and after a rotation step). */
  async certify(brokerId: string, publicKeyPem: string, certificatePem: string): Promise<void> {
    await this.sql.run('UPDATE brokers SET certificate_pem = ? WHERE broker_id = ? AND public_key_pem = ?', [certificatePem, brokerId, publicKeyPem]);
  }

  /** The broker is shutting down: its `gone` on the bus is believed once this is written. */
  async stopped(brokerId: string, at: number): Promise<void> {
    await this.sql.run('UPDATE brokers SET stopped_at = ? WHERE broker_id = ?', [at, brokerId]);
  }

  /** Whether a broker of that id was registered and not yet removed. */
  async remove(brokerId: string, at: number): Promise<boolean> {
    return (await this.sql.run('UPDATE brokers SET removed_at = ? WHERE broker_id = ? AND removed_at IS NULL', [at, brokerId])) > 0;
  }

  /** Forgets brokers stopped before `before` (a broker given no --broker-id has a new id at each start). */
  async pruneStopped(before: number): Promise<number> {
    return this.sql.run('DELETE FROM brokers WHERE stopped_at IS NOT NULL AND stopped_at < ? AND removed_at IS NULL', [before]);
  }
}
