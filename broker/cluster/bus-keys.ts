import {
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  sign,
  verify,
  X509Certificate,
} from 'node:crypto';
import { brokerIdFromAltNames, type CertificateAuthority, createKeyPair, issueBrokerCertificate } from '../../shared/pki/certificates.ts';
import type { BrokerRow } from '../store/brokers-table.ts';

/**
 * A broker's bus certificate lives as long as a server certificate; its bus
 * keys are new at every start, so a broker's messages from before a restart
 * are never believed again.
 */
const BUS_CERTIFICATE_LIFETIME_MS = 365 * 86_400_000;

/** This broker's keys on the bus, and the row that registers them on the store. */
export interface BusKeys {
  brokerId: string;
  signingKey: KeyObject;
  agreementKey: KeyObject;
  registration: Omit<BrokerRow, 'stoppedAt' | 'removedAt'>;
}

/** A broker whose registration checked out: the keys its messages are checked and sealed with. */
export interface BusPeer {
  brokerId: string;
  signingKey: KeyObject;
  agreementKey: KeyObject;
  /** Tells two registrations under one id apart (a broker restarted with the same --broker-id). */
  keyId: string;
  startedAt: number;
}

const spki = (key: KeyObject) => key.export({ type: 'spki', format: 'der' }).toString('base64');

/** What the certificate's key signs: the broker id and both bus keys, each on a line of its own. */
function bindingText(brokerId: string, signingKey: string, agreementKey: string): Buffer {
  return Buffer.from(`fleetmesh-bus-keys-v1\n${brokerId}\n${signingKey}\n${agreementKey}\n`, 'utf8');
}

/**
 * New bus keys for this broker (Ed25519 to sign, X25519 to agree on keys with
 * each other broker), both signed by an RSA key whose certificate from the
 * fleet CA names the broker id: the chain another broker checks before it
 * believes a message signed with them. The certificate comes from the broker
 * that signs (`certifyBusKeys`), or at once when this one can (`createBusKeys`).
 */
export async function newBusKeys(brokerId: string, now = Date.now()): Promise<BusKeys> {
  const certificateKeys = await createKeyPair();
  const signing = generateKeyPairSync('ed25519');
  const agreement = generateKeyPairSync('x25519');
  const signingKey = spki(signing.publicKey);
  const agreementKey = spki(agreement.publicKey);
  const binding = sign('sha256', bindingText(brokerId, signingKey, agreementKey), createPrivateKey(certificateKeys.privateKeyPem)).toString('base64');
  return {
    brokerId,
    signingKey: signing.privateKey,
    agreementKey: agreement.privateKey,
    registration: { brokerId, publicKeyPem: certificateKeys.publicKeyPem, certificatePem: null, signingKey, agreementKey, binding, startedAt: now },
  };
}

/** The certificate of a broker's bus key, from the fleet CA: CN and SAN URI name the broker id. */
export function certifyBusKeys(authority: CertificateAuthority, registration: Pick<BrokerRow, 'brokerId' | 'publicKeyPem'>, now = Date.now()): string {
  return issueBrokerCertificate(authority, {
    publicKeyPem: registration.publicKeyPem,
    brokerId: registration.brokerId,
    lifetimeMs: BUS_CERTIFICATE_LIFETIME_MS,
    now,
  }).certificatePem;
}

/** New bus keys, certified at once by a CA this broker holds. */
export async function createBusKeys(authority: CertificateAuthority, brokerId: string, now = Date.now()): Promise<BusKeys> {
  const keys = await newBusKeys(brokerId, now);
  keys.registration.certificatePem = certifyBusKeys(authority, keys.registration, now);
  return keys;
}

function publicKey(base64: string, type: 'ed25519' | 'x25519'): KeyObject | undefined {
  try {
    const key = createPublicKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === type ? key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The peer a registration row vouches for, or why it does not: its
 * certificate must be issued by one of the trusted CAs, be valid now and name
 * the row's broker id, and its key must have signed both bus keys. A removed
 * broker vouches for nothing.
 */
export function verifyRegistration(row: BrokerRow, trustedCaPems: readonly string[], now = Date.now()): BusPeer | string {
  if (row.removedAt !== null) return `broker ${row.brokerId} was removed from the cluster`;
  if (row.certificatePem === null) return `broker ${row.brokerId} has no certificate for its bus keys yet`;
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(row.certificatePem);
  } catch {
    return `the certificate of broker ${row.brokerId} cannot be read`;
  }
  const issuedByTrusted = trustedCaPems.some((pem) => {
    const ca = new X509Certificate(pem);
    return certificate.checkIssued(ca) && certificate.verify(ca.publicKey);
  });
  if (!issuedByTrusted) return `the certificate of broker ${row.brokerId} is not issued by the fleet CA`;
  if (now < Date.parse(certificate.validFrom) || now > Date.parse(certificate.validTo)) return `the certificate of broker ${row.brokerId} is not valid now`;
  if (brokerIdFromAltNames(certificate.subjectAltName) !== row.brokerId) return `the certificate registered as broker ${row.brokerId} names another broker`;
  if (
    certificate.publicKey.export({ type: 'spki', format: 'pem' }).toString() !==
    createPublicKey(row.publicKeyPem).export({ type: 'spki', format: 'pem' }).toString()
  ) {
    return `the certificate registered as broker ${row.brokerId} is for another key`;
  }
  const signingKey = publicKey(row.signingKey, 'ed25519');
  const agreementKey = publicKey(row.agreementKey, 'x25519');
  if (!signingKey || !agreementKey) return `the bus keys of broker ${row.brokerId} are not Ed25519 and X25519 keys`;
  let bound = false;
  try {
    bound = verify('sha256', bindingText(row.brokerId, row.signingKey, row.agreementKey), certificate.publicKey, Buffer.from(row.binding, 'base64'));
  } catch {
    bound = false;
  }
  if (!bound) return `the bus keys of broker ${row.brokerId} are not signed by its certificate`;
  return {
    brokerId: row.brokerId,
    signingKey,
    agreementKey,
    keyId: registrationKeyId(row),
    startedAt: row.startedAt,
  };
}

/** Tells two registrations under one broker id apart: a hash of both bus keys and the certificate vouching for them. */
export function registrationKeyId(row: Pick<BrokerRow, 'signingKey' | 'agreementKey' | 'certificatePem'>): string {
  return createHash('sha256')
    .update(row.signingKey)
    .update('\n')
    .update(row.agreementKey)
    .update('\n')
    .update(row.certificatePem ?? '')
    .digest('base64url')
    .slice(0, 16);
}

/**
 * The key two brokers share for the messages they seal to each other: X25519
 * between this broker's agreement key and the peer's, through HKDF bound to
 * both ids and both public keys (a restart of either gives a new one).
 */
export function pairKey(self: BusKeys, peer: BusPeer): Buffer {
  const secret = diffieHellman({ privateKey: self.agreementKey, publicKey: peer.agreementKey });
  const [first, second] = [
    [self.brokerId, self.registration.agreementKey],
    [peer.brokerId, spki(peer.agreementKey)],
  ].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
  const info = `fleetmesh-bus-pair-v1\n${first?.join('\n')}\n${second?.join('\n')}`;
  return Buffer.from(hkdfSync('sha256', secret, 'fleetmesh bus', info, 32));
}
