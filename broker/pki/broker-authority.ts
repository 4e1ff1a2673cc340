import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import {
  type CertificateAuthority,
  certificatePin,
  createCertificateAuthority,
  createServingKeyPair,
  type IssuedCertificate,
  isServingKey,
  issueAgentCertificate,
  issueServerCertificate,
} from '../../shared/pki/certificates.ts';
import { writeFileAtomic, writePrivateKey } from '../../shared/pki/key-files.ts';

export const CA_LIFETIME_MS = 10 * 365 * 86_400_000;
const SERVER_LIFETIME_MS = 365 * 86_400_000;
/** A server certificate this close to expiry is replaced at start. */
const SERVER_RENEW_BEFORE_MS = 30 * 86_400_000;

export const CA_CERT_FILE = 'ca.crt';
export const CA_KEY_FILE = 'ca.key';
export const SERVER_CERT_FILE = 'server.crt';
export const SERVER_KEY_FILE = 'server.key';

export interface ServerIdentity {
  certificatePem: string;
  privateKeyPem: string;
  names: string[];
  notAfter: Date;
}

/** The names a broker's server certificate always carries besides the configured ones. */
export function serverNames(advertised: readonly string[]): string[] {
  const names = [...advertised, 'localhost', '127.0.0.1', '::1'].map((n) => n.trim()).filter((n) => n !== '');
  return [...new Set(names)];
}

export function defaultAdvertiseNames(): string[] {
  return [hostname()];
}

/**
 * A certificate authority and TLS server identity kept as files in a data dir
 * (keys mode 0600): where brokers kept the fleet CA before the store held it
 * (fleet-authority.ts imports it from there), and what the benchmarks' bare
 * servers and pre-enrolled fleets use. The CA is created on first start, or given by
 * the operator (`--ca-cert-file`, `--ca-key-file`: a Docker or Kubernetes
 * secret), in which case only its certificate is copied into the data dir, so
 * admin commands can print the pin; the key stays where the operator keeps it.
 * The server certificate is re-issued when the advertised names change or it
 * nears expiry.
 */
export class BrokerAuthority {
  readonly ca: CertificateAuthority;
  readonly pin: string;

  private constructor(ca: CertificateAuthority) {
    this.ca = ca;
    this.pin = certificatePin(ca.certificatePem);
  }

  /**
   * The given CA, or the one in the data dir, created when the dir has none.
   * Refuses a given CA when the data dir already belongs to another one: its
   * agents' certificates would no longer verify.
   */
  static async open(dataDir: string, given?: CertificateAuthority): Promise<BrokerAuthority> {
    const certPath = join(dataDir, CA_CERT_FILE);
    const keyPath = join(dataDir, CA_KEY_FILE);
    const onDisk = existsSync(certPath) ? readFileSync(certPath, 'utf8') : undefined;
    if (given) {
      if (onDisk !== undefined && certificatePin(onDisk) !== certificatePin(given.certificatePem)) {
        throw new FleetError('conflict', `the data dir ${dataDir} belongs to another CA (${certificatePin(onDisk)}) than --ca-cert-file`, {
          hint: 'Start the broker with the CA this data dir was made with, or give it an empty --data-dir (its agents must then enroll again).',
        });
      }
      if (onDisk === undefined) writeFileAtomic(certPath, given.certificatePem);
      return new BrokerAuthority(given);
    }
    if (onDisk !== undefined) {
      if (!existsSync(keyPath)) {
        throw new FleetError('not_found', `the data dir ${dataDir} holds a CA certificate but not its key`, {
          hint: 'This broker was started with --ca-cert-file and --ca-key-file: give it those again.',
        });
      }
      return new BrokerAuthority({ certificatePem: onDisk, privateKeyPem: readFileSync(keyPath, 'utf8') });
    }
    const ca = await createCertificateAuthority({ commonName: `fleetmesh CA ${hostname()}`, lifetimeMs: CA_LIFETIME_MS });
    writePrivateKey(keyPath, ca.privateKeyPem);
    writeFileAtomic(certPath, ca.certificatePem);
    return new BrokerAuthority(ca);
  }

  /** The pin of the data dir's CA, for admin commands; creates the CA like `open` when there is none yet. */
  static async pin(dataDir: string): Promise<string> {
    const certPath = join(dataDir, CA_CERT_FILE);
    return existsSync(certPath) ? certificatePin(readFileSync(certPath, 'utf8')) : (await BrokerAuthority.open(dataDir)).pin;
  }

  /** The server identity for these names, re-using the one on disk when it still fits. */
  async serverIdentity(dataDir: string, names: string[], now = Date.now()): Promise<ServerIdentity> {
    const certPath = join(dataDir, SERVER_CERT_FILE);
    const keyPath = join(dataDir, SERVER_KEY_FILE);
    if (existsSync(certPath) && existsSync(keyPath)) {
      const certificatePem = readFileSync(certPath, 'utf8');
      const x509 = new X509Certificate(certificatePem);
      const current = (x509.subjectAltName ?? '').split(',').map((n) => n.trim().replace(/^(DNS|IP Address):/, ''));
      const wanted = names.map((n) => (n === '::1' ? '0:0:0:0:0:0:0:1' : n));
      const sameNames = current.length === wanted.length && wanted.every((n) => current.includes(n));
      const fresh = new Date(x509.validTo).getTime() - now > SERVER_RENEW_BEFORE_MS;
      const ours = x509.checkIssued(new X509Certificate(this.ca.certificatePem));
      if (sameNames && fresh && ours && isServingKey(x509)) {
        return { certificatePem, privateKeyPem: readFileSync(keyPath, 'utf8'), names, notAfter: new Date(x509.validTo) };
      }
    }
    const keys = await createServingKeyPair();
    const issued = issueServerCertificate(this.ca, { publicKeyPem: keys.publicKeyPem, names, lifetimeMs: SERVER_LIFETIME_MS, now });
    writePrivateKey(keyPath, keys.privateKeyPem);
    writeFileAtomic(certPath, issued.certificatePem);
    return { certificatePem: issued.certificatePem, privateKeyPem: keys.privateKeyPem, names, notAfter: issued.notAfter };
  }

  issueAgentCertificate(options: { publicKeyPem: string; agentId: string; name: string; lifetimeMs: number; now?: number }): IssuedCertificate {
    return issueAgentCertificate(this.ca, options);
  }
}
