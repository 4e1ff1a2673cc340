import { randomUUID, X509Certificate } from 'node:crypto';
import { errorInfo, FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentCertificateRequest, CertificateIssuer, ServerCertificateRequest } from '../pki/certificate-issuer.ts';
import type { FleetAuthority, SignedCertificate } from '../pki/fleet-authority.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { Bus, BusSubscription } from './bus.ts';
import { certifyBusKeys } from './bus-keys.ts';
import { type SignRequestMessage, SUBJECTS, signReply, signRequest } from './bus-messages.ts';

/** How long the signer lease lasts without renewal: another broker that may sign takes it this long after the signer died. */
const LEASE_MS = 8000;
/** How often the lease is taken or renewed, and waiting brokers' bus keys certified. */
const LEASE_EVERY_MS = 2000;
/** How long a request waits for the signer to be heard on the bus (it beats once a second). */
const HEARD_WITHIN_MS = 5000;
/** How long a certificate request to the signer may take. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * One signer per cluster. Brokers that can open the CA key (given its secret)
 * contend for a lease in the store; the one holding it signs every
 * certificate of the cluster (agents', brokers' serving certificates, brokers'
 * bus keys) and the others send it their requests over the bus, sealed. A
 * broker without the secret never holds the key at all. When the signer dies,
 * its lease runs out and another broker that may sign takes it over.
 */
export class SigningService implements CertificateIssuer {
  private timer: NodeJS.Timeout | undefined;
  private subscription: BusSubscription | undefined;
  private holding = false;
  private stopped = false;

  constructor(
    private readonly bus: Pick<Bus, 'subscribe' | 'publishSealed' | 'replies' | 'inbox' | 'knows'>,
    private readonly store: BrokerStore,
    private readonly authority: FleetAuthority,
    private readonly selfId: string,
    private readonly log: Logger,
  ) {}

  /** Whether this broker signs for the cluster now. */
  get signing(): boolean {
    return this.holding;
  }

  start(): void {
    this.subscription = this.bus.subscribe(SUBJECTS.sign(this.selfId), signRequest, ({ sender, message }, raw) => {
      if (raw.reply) void this.serve(sender, message, raw.reply);
    });
    void this.tick();
    this.timer = setInterval(() => void this.tick(), LEASE_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.subscription?.unsubscribe();
    if (this.holding) {
      this.holding = false;
      await this.store.signer.release(this.selfId).catch(() => {});
    }
  }

  /** Takes or renews the lease when this broker may sign, then certifies brokers' bus keys that wait for it. */
  async tick(): Promise<void> {
    if (this.stopped) return;
    try {
      const now = Date.now();
      const was = this.holding;
      this.holding = this.authority.canSign() && (await this.store.signer.hold(this.selfId, now, now + LEASE_MS));
      if (this.holding !== was) this.log.info(this.holding ? 'this broker signs for the cluster now' : 'this broker no longer signs for the cluster');
      if (this.holding) await this.certifyBrokers();
    } catch (error) {
      this.log.warn('could not take or renew the signer lease', { error: (error as Error).message });
    }
  }

  /** Bus keys waiting for a certificate, or certified by a CA the brokers no longer sign with (a rotation step). */
  private async certifyBrokers(): Promise<void> {
    const signing = this.authority.set.signing();
    const ca = { certificatePem: signing.certificatePem, privateKeyPem: this.authority.keyOf(signing) ?? '' };
    for (const row of await this.store.brokers.list()) {
      if (row.removedAt !== null || row.stoppedAt !== null) continue;
      if (row.certificatePem !== null && issuedBy(row.certificatePem, signing.certificatePem)) continue;
      await this.store.brokers.certify(row.brokerId, row.publicKeyPem, certifyBusKeys(ca, row));
      this.log.info('bus keys of a broker certified', { broker: row.brokerId, ca_pin: signing.pin });
    }
  }

  issueAgent(request: AgentCertificateRequest): Promise<SignedCertificate> {
    if (this.holding) return Promise.resolve(this.authority.issueAgentCertificate(request));
    return this.forward({ kind: 'agent', ...request });
  }

  issueServer(request: ServerCertificateRequest): Promise<SignedCertificate> {
    if (this.holding) return Promise.resolve(this.authority.issueServerCertificate(request));
    return this.forward({ kind: 'server', ...request });
  }

  private async forward(certificate: SignRequestMessage['certificate']): Promise<SignedCertificate> {
    const signer = await this.store.signer.holder(Date.now());
    if (signer === undefined || (signer === this.selfId && !this.holding)) {
      throw new FleetError('unavailable', 'no broker of the cluster can sign certificates now', {
        hint: 'Start a broker with --ca-key-secret-file (or FLEETMESH_CA_KEY_SECRET): it takes the signer lease within seconds.',
      });
    }
    // A broker that just joined hears the signer's beat within a second or two.
    for (let waitedMs = 0; !this.bus.knows(signer); waitedMs += 100) {
      if (waitedMs >= HEARD_WITHIN_MS) {
        throw new FleetError('unavailable', `broker ${signer}, which signs for the cluster, has not been heard on the bus`, {
          hint: 'Try again in a few seconds.',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return new Promise((resolve, reject) => {
      const inbox = this.bus.inbox();
      const timer = setTimeout(() => {
        subscription.unsubscribe();
        reject(
          new FleetError('unavailable', `broker ${signer}, which signs for the cluster, did not answer within ${REQUEST_TIMEOUT_MS} ms`, {
            hint: 'Try again.',
          }),
        );
      }, REQUEST_TIMEOUT_MS);
      const subscription = this.bus.replies(inbox, signReply, (reply) => {
        // Only the signer answers; anything else on the inbox is dropped.
        if (reply !== 'no_responders' && reply.sender !== signer) return;
        clearTimeout(timer);
        subscription.unsubscribe();
        if (reply === 'no_responders') {
          reject(
            new FleetError('unavailable', `broker ${signer}, which held the signer lease, is gone`, { hint: 'Try again: another broker takes the lease.' }),
          );
          return;
        }
        const answer = reply.message;
        if (!answer.ok) reject(new FleetError(answer.error.code, answer.error.message, { hint: answer.error.hint }));
        else
          resolve({
            certificatePem: answer.certificatePem,
            serial: answer.serial,
            notBefore: new Date(answer.notBeforeUnixMs),
            notAfter: new Date(answer.notAfterUnixMs),
            caPin: answer.caPin,
          });
      });
      this.bus.publishSealed(SUBJECTS.sign(signer), { requestId: randomUUID(), certificate }, [signer], { reply: inbox });
    });
  }

  /** Signs what another broker asks, while this broker holds the lease. */
  private async serve(sender: string, request: SignRequestMessage, reply: string): Promise<void> {
    const answer = (message: unknown) => this.bus.publishSealed(reply, message, [sender]);
    try {
      if (!this.holding) throw new FleetError('unavailable', `broker ${this.selfId} does not sign for the cluster now`, { hint: 'Try again.' });
      const { certificate } = request;
      // The asking broker may have seen a rotation step before this one's watch did: sign by the phase in the store now.
      await this.authority.refresh();
      const signed = certificate.kind === 'agent' ? this.authority.issueAgentCertificate(certificate) : this.authority.issueServerCertificate(certificate);
      this.log.info('certificate signed for another broker', {
        broker: sender,
        kind: certificate.kind,
        ...(certificate.kind === 'agent' ? { agent_id: certificate.agentId, name: certificate.name } : { names: certificate.names.join(',') }),
        serial: signed.serial,
      });
      answer({
        ok: true,
        certificatePem: signed.certificatePem,
        serial: signed.serial,
        notBeforeUnixMs: signed.notBefore.getTime(),
        notAfterUnixMs: signed.notAfter.getTime(),
        caPin: signed.caPin,
      });
    } catch (error) {
      const failure = toFleetError(error);
      answer({ ok: false, error: errorInfo(failure.code, failure.message, failure.hint) });
    }
  }
}

function issuedBy(certificatePem: string, caPem: string): boolean {
  try {
    const certificate = new X509Certificate(certificatePem);
    const ca = new X509Certificate(caPem);
    return certificate.checkIssued(ca) && certificate.verify(ca.publicKey);
  } catch {
    return false;
  }
}
