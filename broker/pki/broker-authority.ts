import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  type CertificateAuthority,
  certificatePin,
  createCertificateAuthority,
  createKeyPair,
  type IssuedCertificate,
  issueAgentCertificate,
  issueServerCertificate,
} from '../../shared/pki/certificates.ts';
import { writeFileAtomic, writePrivateKey } from '../../shared/pki/key-files.ts';

const CA_LIFETIME_MS = 10 * 365 * 86_400_000;
const SERVER_LIFETIME_MS = 365 * 86_400_000;
/** A server certificate this close to expiry is replaced at start. */
const SERVER_RENEW_BEFORE_MS = 30 * 86_400_000;

export const CA_CERT_FILE = 'ca.crt';
export const CA_KEY_FILE = 'ca.key';
const SERVER_CERT_FILE = 'server.crt';
const SERVER_KEY_FILE = 'server.key';

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
 * The broker's certificate authority and TLS server identity, kept as files in
 * its data dir (keys mode 0600). Created on first start; the server certificate
 * is re-issued when the advertised names change or it nears expiry.
 */
export class BrokerAuthority {
  readonly ca: CertificateAuthority;
  readonly pin: string;

  private constructor(ca: CertificateAuthority) {
    this.ca = ca;
    this.pin = certificatePin(ca.certificatePem);
  }

  /** Loads the CA from a data dir, creating it when the dir has none. */
  static async open(dataDir: string): Promise<BrokerAuthority> {
    const certPath = join(dataDir, CA_CERT_FILE);
    const keyPath = join(dataDir, CA_KEY_FILE);
    if (existsSync(certPath) && existsSync(keyPath)) {
      return new BrokerAuthority({ certificatePem: readFileSync(certPath, 'utf8'), privateKeyPem: readFileSync(keyPath, 'utf8') });
    }
    const ca = await createCertificateAuthority({ commonName: `fleetmesh CA ${hostname()}`, lifetimeMs: CA_LIFETIME_MS });
    writePrivateKey(keyPath, ca.privateKeyPem);
    writeFileAtomic(certPath, ca.certificatePem);
    return new BrokerAuthority(ca);
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
      if (sameNames && fresh && ours) {
        return { certificatePem, privateKeyPem: readFileSync(keyPath, 'utf8'), names, notAfter: new Date(x509.validTo) };
      }
    }
    const keys = await createKeyPair();
    const issued = issueServerCertificate(this.ca, { publicKeyPem: keys.publicKeyPem, names, lifetimeMs: SERVER_LIFETIME_MS, now });
    writePrivateKey(keyPath, keys.privateKeyPem);
    writeFileAtomic(certPath, issued.certificatePem);
    return { certificatePem: issued.certificatePem, privateKeyPem: keys.privateKeyPem, names, notAfter: issued.notAfter };
  }

  issueAgentCertificate(options: { publicKeyPem: string; agentId: string; name: string; lifetimeMs: number; now?: number }): IssuedCertificate {
    return issueAgentCertificate(this.ca, options);
  }
}
