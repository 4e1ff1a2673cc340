import { X509Certificate } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { certificatePin, createServingKeyPair, isServingKey } from '../../shared/pki/certificates.ts';
import { writeFileAtomic, writePrivateKey } from '../../shared/pki/key-files.ts';
import { SERVER_CERT_FILE, SERVER_KEY_FILE } from './broker-authority.ts';
import type { CaSet } from './ca-set.ts';
import type { SignedCertificate } from './fleet-authority.ts';

/** What TLS serves: the broker's certificate with the chain after it, and its key. */
export interface ServingIdentity {
  /** The broker's certificate followed by the served chain (ca-set.ts `servingChainPem`). */
  certificatePem: string;
  privateKeyPem: string;
  names: string[];
  notBefore: Date;
  notAfter: Date;
  /** The pin of the CA that issued it. */
  caPin: string;
}

interface ServingEvents {
  /** A new identity (renewed, re-issued for a rotation step, or the same one with a new chain) to serve from now on. */
  changed: [identity: ServingIdentity];
}

export interface ServingCertificateOptions {
  dataDir: string;
  names: string[];
  lifetimeMs: number;
  /** Signs a serving certificate: this broker's CA, or in a cluster the broker holding the signer lease. */
  issue(publicKeyPem: string, names: string[], lifetimeMs: number): Promise<SignedCertificate>;
  /** The fleet's CAs now. */
  cas(): CaSet;
  log: Logger;
}

/** A renewal that could not be made is tried again after 2 s, then twice as long each time, up to a minute. */
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 60_000;
/**
 * At start, a signer that cannot be reached yet (a cluster's signing broker
 * not yet heard on the bus by one that just joined, or too busy to answer) is
 * asked again with the same backoff for up to a minute before the start fails.
 */
const START_RETRY_BUDGET_MS = 60_000;

/** When a certificate of this life is renewed: a random point between half and two thirds of it, as agents renew theirs. */
function renewalAt(notBefore: Date, notAfter: Date, random = Math.random()): number {
  const lifetime = notAfter.getTime() - notBefore.getTime();
  return notBefore.getTime() + lifetime * (0.5 + random / 6);
}

/** Node's spelling of the names a certificate carries, to compare with the configured ones. */
function namesOf(certificate: X509Certificate): string[] {
  return (certificate.subjectAltName ?? '').split(',').map((name) => name.trim().replace(/^(DNS|IP Address):/, ''));
}

/**
 * The broker's serving certificate, kept current while the broker runs: the
 * one in the data dir is served again when it still fits (its names, a CA the
 * phase serves from, not past its renewal point); it is renewed before it
 * expires, and re-issued when a rotation step changes the CA brokers serve
 * from, each time without a restart (the TLS layer takes the new one for the
 * connections after it). Counts its renewals for /metrics.
 */
export class ServingCertificate extends EventEmitter<ServingEvents> {
  private identity: ServingIdentity | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private renewing: Promise<void> | undefined;
  private retryMs = RETRY_FIRST_MS;
  /** Serving certificates issued since the broker started (the first one included). */
  renewals = 0;

  constructor(private readonly options: ServingCertificateOptions) {
    super();
  }

  get current(): ServingIdentity {
    if (!this.identity) throw new Error('the serving certificate has not been loaded yet');
    return this.identity;
  }

  /** Serves the data dir's certificate when it fits, or issues one; then keeps it renewed. */
  async start(now = Date.now()): Promise<ServingIdentity> {
    this.identity = this.fromDisk(now) ?? (await this.issueAtStart());
    this.schedule();
    return this.identity;
  }

  private async issueAtStart(): Promise<ServingIdentity> {
    const until = Date.now() + START_RETRY_BUDGET_MS;
    for (let retryMs = RETRY_FIRST_MS; ; retryMs = Math.min(RETRY_MAX_MS, retryMs * 2)) {
      try {
        return await this.issue();
      } catch (error) {
        if (!(error instanceof FleetError) || error.code !== 'unavailable' || this.stopped || Date.now() + retryMs > until) throw error;
        this.options.log.warn('could not get a serving certificate yet; trying again', { error: error.message, retry_ms: retryMs });
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * The CAs changed: a certificate of a CA the phase no longer serves from is
   * re-issued now; otherwise the same one is served with the chain the phase
   * asks for.
   */
  casChanged(set: CaSet): void {
    if (!this.identity) return;
    if (this.identity.caPin !== set.serving().pin) {
      void this.renew('the CA brokers serve from changed');
      return;
    }
    this.identity = { ...this.identity, certificatePem: withChain(leafOf(this.identity.certificatePem), set) };
    this.emit('changed', this.identity);
  }

  private fromDisk(now: number): ServingIdentity | undefined {
    const certPath = join(this.options.dataDir, SERVER_CERT_FILE);
    const keyPath = join(this.options.dataDir, SERVER_KEY_FILE);
    if (!existsSync(certPath) || !existsSync(keyPath)) return undefined;
    const leaf = readFileSync(certPath, 'utf8');
    const certificate = new X509Certificate(leaf);
    const set = this.options.cas();
    const serving = set.serving();
    const current = namesOf(certificate);
    const wanted = this.options.names.map((n) => (n === '::1' ? '0:0:0:0:0:0:0:1' : n));
    const sameNames = current.length === wanted.length && wanted.every((n) => current.includes(n));
    const issuedByServing =
      certificate.checkIssued(new X509Certificate(serving.certificatePem)) && certificate.verify(new X509Certificate(serving.certificatePem).publicKey);
    const notBefore = new Date(certificate.validFrom);
    const notAfter = new Date(certificate.validTo);
    // Past its renewal point, issued for a longer life than the broker is given now, or for an RSA key (before serving keys were P-256): issue a new one.
    const lifetimeFits = notAfter.getTime() - notBefore.getTime() <= this.options.lifetimeMs * 1.2;
    if (!sameNames || !issuedByServing || !lifetimeFits || !isServingKey(certificate) || now >= renewalAt(notBefore, notAfter, 1)) return undefined;
    return {
      certificatePem: withChain(leaf, set),
      privateKeyPem: readFileSync(keyPath, 'utf8'),
      names: this.options.names,
      notBefore,
      notAfter,
      caPin: certificatePin(serving.certificatePem),
    };
  }

  private async issue(): Promise<ServingIdentity> {
    const keys = await createServingKeyPair();
    const issued = await this.options.issue(keys.publicKeyPem, this.options.names, this.options.lifetimeMs);
    writePrivateKey(join(this.options.dataDir, SERVER_KEY_FILE), keys.privateKeyPem);
    writeFileAtomic(join(this.options.dataDir, SERVER_CERT_FILE), issued.certificatePem);
    this.renewals += 1;
    return {
      certificatePem: withChain(issued.certificatePem, this.options.cas()),
      privateKeyPem: keys.privateKeyPem,
      names: this.options.names,
      notBefore: issued.notBefore,
      notAfter: issued.notAfter,
      caPin: issued.caPin,
    };
  }

  private schedule(delayMs?: number): void {
    clearTimeout(this.timer);
    if (this.stopped || !this.identity) return;
    const waitMs = delayMs ?? Math.max(0, renewalAt(this.identity.notBefore, this.identity.notAfter) - Date.now());
    // setTimeout takes at most 2^31-1 ms (about 24.8 days); a longer wait is taken in steps.
    const stepMs = Math.min(waitMs, 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      if (stepMs < waitMs) this.schedule(waitMs - stepMs);
      else void this.renew('it reached its renewal point');
    }, stepMs);
    this.timer.unref();
  }

  private renew(why: string): Promise<void> {
    this.renewing ??= (async () => {
      try {
        const identity = await this.issue();
        if (this.stopped) return;
        const serving = this.options.cas().serving().pin;
        if (identity.caPin !== serving) throw new Error(`the signer issued it from CA ${identity.caPin}, not ${serving}, which brokers serve from now`);
        this.identity = identity;
        this.options.log.info('serving certificate renewed', { why, not_after: identity.notAfter.toISOString(), ca_pin: identity.caPin });
        this.emit('changed', identity);
        this.retryMs = RETRY_FIRST_MS;
        this.schedule();
      } catch (error) {
        const retryMs = this.retryMs;
        this.retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
        this.options.log.warn('could not renew the serving certificate; trying again', { why, error: (error as Error).message, retry_ms: retryMs });
        this.schedule(retryMs);
      } finally {
        this.renewing = undefined;
      }
    })();
    return this.renewing;
  }
}

function leafOf(chainPem: string): string {
  const end = '-----END CERTIFICATE-----';
  return `${chainPem.slice(0, chainPem.indexOf(end) + end.length)}\n`;
}

function withChain(leafPem: string, set: CaSet): string {
  return `${leafPem.trim()}\n${set.servingChainPem()}`;
}
