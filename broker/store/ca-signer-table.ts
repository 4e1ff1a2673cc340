import type { SqlEngine } from './sql-engine.ts';

/**
 * The lease of the one broker of a cluster that signs certificates. A broker
 * that may sign takes it when it is free or expired and renews it while it
 * lives; the others send it their certificate requests over the bus.
 */
export class CaSignerTable {
  constructor(private readonly sql: SqlEngine) {}

  /** Takes or renews the lease until `expiresAt`; true when this broker holds it now. */
  async hold(brokerId: string, now: number, expiresAt: number): Promise<boolean> {
    const changed = await this.sql.run(
      `INSERT INTO ca_signer (id, broker_id, expires_at) VALUES (1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET broker_id = excluded.broker_id, expires_at = excluded.expires_at
       WHERE ca_signer.broker_id = ? OR ca_signer.expires_at < ?`,
      [brokerId, expiresAt, brokerId, now],
      // Renewed ahead of the agents' statements: a renewal that waited past the lease let another broker take it.
      { ahead: true },
    );
    return changed > 0;
  }

  /** The broker holding an unexpired lease, if any. */
  async holder(now: number): Promise<string | undefined> {
    const row = await this.sql.get<{ broker_id: string; expires_at: number | string }>('SELECT broker_id, expires_at FROM ca_signer WHERE id = 1');
    return row && Number(row.expires_at) >= now ? row.broker_id : undefined;
  }

  /** Gives the lease up (a broker stopping), so another takes it at once. */
  async release(brokerId: string): Promise<void> {
    await this.sql.run('DELETE FROM ca_signer WHERE id = 1 AND broker_id = ?', [brokerId]);
  }
}
