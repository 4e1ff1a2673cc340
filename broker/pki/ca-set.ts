import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { CaRow } from '../store/certificate-authorities-table.ts';

/**
 * Where a CA rotation stands (DESIGN §13). `standby`: one CA. `init`: the next
 * CA exists and is trusted beside the active one. `update-clients`: agents
 * re-issue their certificates under the next CA. `update-servers`: brokers
 * serve certificates of the next CA. Back to `standby`, the old CA is retired.
 * `rollback`: servers and signing return to the active CA and agents on the
 * next one re-issue under it; `standby` then drops the next CA.
 */
export const ROTATION_PHASES = ['standby', 'init', 'update-clients', 'update-servers', 'rollback'] as const;
export type RotationPhase = (typeof ROTATION_PHASES)[number];

/** broker_meta key: the rotation's phase. */
export const META_ROTATION_PHASE = 'ca_rotation_phase';

export function isRotationPhase(value: string | undefined): value is RotationPhase {
  return (ROTATION_PHASES as readonly string[]).includes(value ?? '');
}

/**
 * The fleet's CAs at one moment, and what each phase makes of them: which CA
 * signs, which serves the brokers' certificates, which agents and brokers
 * trust, and what TLS accepts (retired CAs too, so that an agent holding a
 * retired certificate reaches the broker and is told in words why it is
 * refused, rather than failing a handshake).
 */
export class CaSet {
  readonly active: CaRow;
  readonly next: CaRow | undefined;
  readonly retired: readonly CaRow[];

  constructor(
    readonly rows: readonly CaRow[],
    readonly phase: RotationPhase,
  ) {
    const active = rows.find((row) => row.state === 'active');
    if (!active) throw new FleetError('internal', 'the store holds no active CA', { hint: 'Start a broker on this store once: it makes or imports one.' });
    this.active = active;
    this.next = rows.find((row) => row.state === 'next');
    this.retired = rows.filter((row) => row.state === 'retired');
  }

  /** The CA new certificates come from: the next one once agents are to move to it. */
  signing(): CaRow {
    return (this.phase === 'update-clients' || this.phase === 'update-servers') && this.next ? this.next : this.active;
  }

  /** The CA the brokers' serving certificates come from. */
  serving(): CaRow {
    return this.phase === 'update-servers' && this.next ? this.next : this.active;
  }

  /** The CAs agents and brokers trust now: both while a rotation runs, one otherwise. */
  trusted(): CaRow[] {
    return this.next && this.phase !== 'standby' ? [this.active, this.next] : [this.active];
  }

  trustedPins(): string[] {
    return this.trusted().map((row) => row.pin);
  }

  isTrusted(pin: string): boolean {
    return this.trustedPins().includes(pin);
  }

  /** The bundle agents keep and verify brokers with. */
  bundlePem(): string {
    return this.trusted()
      .map((row) => row.certificatePem.trim())
      .join('\n')
      .concat('\n');
  }

  /** What TLS accepts client certificates from: every CA this fleet had (the handler refuses the retired ones in words). */
  clientCasPem(): string {
    return [...this.trusted(), ...this.retired]
      .map((row) => row.certificatePem.trim())
      .join('\n')
      .concat('\n');
  }

  /**
   * The certificates served after a broker's own: the serving CA, and while
   * brokers serve from the next CA, its cross certificate and the active CA,
   * so an agent that trusts only the active CA still verifies the broker, and
   * one enrolling finds the active CA's pin in the chain.
   */
  servingChainPem(): string {
    const serving = this.serving();
    const chain = serving !== this.active && serving.crossCertificatePem ? [serving.crossCertificatePem, this.active.certificatePem] : [serving.certificatePem];
    return chain
      .map((pem) => pem.trim())
      .join('\n')
      .concat('\n');
  }

  /** The pins an enrolling agent can check the broker against now: the CA at the end of the served chain. */
  validPins(): string[] {
    return [this.active.pin];
  }

  /** What the phase and CAs are, to tell a change from a repeat. */
  get version(): string {
    return `${this.phase}|${this.rows.map((row) => `${row.pin}:${row.state}`).join(',')}`;
  }
}
