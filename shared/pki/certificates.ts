import { createHash, createPublicKey, generateKeyPair, randomBytes, sign, verify, X509Certificate } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import type Forge from 'node-forge';
import { FleetError } from '../errors/fleet-error.ts';

/**
 * Certificate issuance for the fleet's private PKI. Keys come from node:crypto
 * (forge's pure-JS key generation takes seconds); node-forge only builds and
 * signs certificates and requests. Every verification of a certificate is left
 * to Node's TLS, and the one signature we check ourselves (a CSR's proof of
 * possession) is checked with node:crypto, not forge.
 */

export interface KeyPair {
  /** PKCS#1 PEM for RSA, PKCS#8 PEM for P-256. */
  privateKeyPem: string;
  publicKeyPem: string;
}

export interface IssuedCertificate {
  certificatePem: string;
  serial: string;
  notBefore: Date;
  notAfter: Date;
}

export interface CertificateAuthority {
  certificatePem: string;
  privateKeyPem: string;
}

const generateKeyPairAsync = promisify(generateKeyPair);

let loadedForge: typeof Forge | undefined;

/**
 * node-forge, required on first use: only the broker's issuing of
 * certificates and reading of requests needs it (an agent writes its requests
 * with node:crypto, certificate-request.ts), and loading it at start held
 * about 5 MiB of an idle agent's memory (docs/performance.md).
 */
function nodeForge(): typeof Forge {
  loadedForge ??= createRequire(import.meta.url)('node-forge') as typeof Forge;
  return loadedForge;
}
/**
 * Certificates start a little in the past, so a peer whose clock is behind
 * accepts them: 5 minutes, or a tenth of a short lifetime (so the agent's
 * renewal point, a fraction of the lifetime, stays meaningful).
 */
function backdateMs(lifetimeMs: number): number {
  return Math.min(5 * 60_000, Math.floor(lifetimeMs / 10));
}
const AGENT_URI_PREFIX = 'spiffe://fleetmesh/agent/';
const BROKER_URI_PREFIX = 'spiffe://fleetmesh/broker/';

export async function createKeyPair(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/**
 * A P-256 key pair, for the broker's serving certificate: the server signs
 * once in every TLS handshake, and a P-256 signature costs a tenth of an
 * RSA-2048 one (0.13 against 1.05 ms here), which made a handshake on the
 * agents' port 0.6-0.8 ms cheaper on Node 20 and 24 (docs/performance.md).
 * Agents keep RSA keys: the broker only verifies their signatures, which RSA
 * makes cheap, and the CA stays RSA for the same reason.
 */
export async function createServingKeyPair(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPairAsync('ec', {
    namedCurve: 'prime256v1',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** Whether a certificate is for the kind of key serving certificates have now (P-256). */
export function isServingKey(certificate: X509Certificate): boolean {
  return certificate.publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

/** The key pair of an existing private key. */
export function keyPairOf(privateKeyPem: string): KeyPair {
  return { privateKeyPem, publicKeyPem: createPublicKey(privateKeyPem).export({ type: 'spki', format: 'pem' }).toString() };
}

/** A random positive serial number as lower-case hex (16 bytes, high bit clear). */
function newSerial(): string {
  const bytes = randomBytes(16);
  // 0x10..0x7f: positive, and no leading zero nibble for peers to strip.
  bytes[0] = 0x10 + ((bytes[0] ?? 0) % 0x70);
  return bytes.toString('hex');
}

/** `sha256:<hex>` of a certificate's DER encoding: the pin an agent checks the broker CA against. */
export function certificatePin(certificatePem: string): string {
  return `sha256:${createHash('sha256').update(new X509Certificate(certificatePem).raw).digest('hex')}`;
}

/** SHA-256 of a public key's SPKI DER, to compare keys across certificates and requests. */
export function publicKeyFingerprint(publicKeyPem: string): string {
  const der = createPublicKey(publicKeyPem).export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

/**
 * A certificate under construction. forge carries RSA public keys only: any
 * other key (the serving certificate's P-256) rides along as its SPKI DER,
 * put in place of a stand-in as the certificate is signed.
 */
type Draft = Forge.pki.Certificate & { otherKey?: Buffer };

function baseCertificate(publicKeyPem: string, lifetimeMs: number, now: number): { cert: Draft; serial: string } {
  const forge = nodeForge();
  const cert: Draft = forge.pki.createCertificate();
  const key = createPublicKey(publicKeyPem);
  if (key.asymmetricKeyType === 'rsa') cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  else if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    cert.otherKey = key.export({ type: 'spki', format: 'der' });
    cert.publicKey = forge.pki.setRsaPublicKey(new forge.jsbn.BigInteger('1', 10), new forge.jsbn.BigInteger('3', 10));
  } else throw new FleetError('invalid_argument', `an ${key.asymmetricKeyType ?? 'unknown'} key cannot be certified: only RSA and P-256 keys can`);
  const serial = newSerial();
  cert.serialNumber = serial;
  cert.validity.notBefore = new Date(now - backdateMs(lifetimeMs));
  cert.validity.notAfter = new Date(now + lifetimeMs);
  return { cert, serial };
}

function issued(cert: Forge.pki.Certificate, serial: string): IssuedCertificate {
  const forge = nodeForge();
  return {
    certificatePem: forge.pki.certificateToPem(cert),
    serial,
    notBefore: cert.validity.notBefore,
    notAfter: cert.validity.notAfter,
  };
}

export async function createCertificateAuthority(options: { commonName: string; lifetimeMs: number; now?: number }): Promise<CertificateAuthority> {
  const keys = await createKeyPair();
  const { cert, serial } = baseCertificate(keys.publicKeyPem, options.lifetimeMs, options.now ?? Date.now());
  const subject = [
    { name: 'commonName', value: options.commonName },
    { name: 'organizationName', value: 'fleetmesh' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  // One CA may stand between it and a certificate: the cross certificate of the CA that replaces it in a
  // rotation, through which an agent that trusts only this one verifies a broker serving from the next.
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 1, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCertificate(cert, keys.privateKeyPem);
  return { certificatePem: issued(cert, serial).certificatePem, privateKeyPem: keys.privateKeyPem };
}

/**
 * The key of `successor` (a new CA) certified by `authority` (the CA it
 * replaces), with the successor's own subject: a peer that trusts only the
 * old CA verifies a certificate of the new one through it, while a CA rotation
 * is under way.
 */
export function crossCertify(authority: CertificateAuthority, successor: { certificatePem: string }, options: { lifetimeMs: number; now?: number }): string {
  const forge = nodeForge();
  const next = forge.pki.certificateFromPem(successor.certificatePem);
  const { cert, serial } = baseCertificate(forge.pki.publicKeyToPem(next.publicKey), options.lifetimeMs, options.now ?? Date.now());
  cert.setSubject(next.subject.attributes);
  signWithAuthority(cert, authority, [
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  return issued(cert, serial).certificatePem;
}

function signWithAuthority(cert: Draft, authority: CertificateAuthority, extensions: object[]): void {
  const forge = nodeForge();
  const caCert = forge.pki.certificateFromPem(authority.certificatePem);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    ...extensions,
    subjectKeyIdentifier(cert),
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signCertificate(cert, authority.privateKeyPem);
}

/**
 * Signs a certificate sha256WithRSAEncryption, as forge's cert.sign() would,
 * with node:crypto: the same bytes (PKCS #1 v1.5 signatures are
 * deterministic), without parsing the key and working the RSA arithmetic out
 * in JavaScript, which made each certificate cost tens of milliseconds of the
 * broker's event loop (an enrolment, a renewal, a CA rotation's re-issues).
 */
/**
 * RFC 5280's key identifier: SHA-1 of the subject public key's bits. forge
 * works it out for an RSA key; a P-256 key's bits are its point, the last 65
 * bytes of its SPKI.
 */
function subjectKeyIdentifier(cert: Draft): object {
  if (!cert.otherKey) return { name: 'subjectKeyIdentifier' };
  const forge = nodeForge();
  const identifier = createHash('sha1').update(cert.otherKey.subarray(-65)).digest('binary');
  return { name: 'subjectKeyIdentifier', value: forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.OCTETSTRING, false, identifier) };
}

/** The key usage of a leaf certificate: RSA keys may also carry key exchange (TLS 1.2's RSA key transport), other keys only sign. */
function leafKeyUsage(cert: Draft): object {
  return cert.otherKey
    ? { name: 'keyUsage', digitalSignature: true, critical: true }
    : { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true };
}

function signCertificate(cert: Draft, privateKeyPem: string): void {
  const forge = nodeForge();
  const withOid = cert as Forge.pki.Certificate & { signatureOid: string; siginfo: { algorithmOid: string }; tbsCertificate: Forge.asn1.Asn1 };
  withOid.signatureOid = forge.pki.oids.sha256WithRSAEncryption as string;
  withOid.siginfo.algorithmOid = withOid.signatureOid;
  // getTBSCertificate is forge's own, missing from its type declarations.
  const pki = forge.pki as typeof forge.pki & { getTBSCertificate(cert: Forge.pki.Certificate): Forge.asn1.Asn1 };
  withOid.tbsCertificate = pki.getTBSCertificate(cert);
  // The subject public key info is the TBS's seventh field (after version, serial, signature algorithm, issuer, validity and subject).
  if (cert.otherKey) (withOid.tbsCertificate.value as Forge.asn1.Asn1[])[6] = forge.asn1.fromDer(cert.otherKey.toString('binary'));
  const tbs = Buffer.from(forge.asn1.toDer(withOid.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, privateKeyPem).toString('binary');
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A TLS server certificate for the broker, valid for every name and address given. */
export function issueServerCertificate(
  authority: CertificateAuthority,
  options: { publicKeyPem: string; names: string[]; lifetimeMs: number; now?: number },
): IssuedCertificate {
  const { cert, serial } = baseCertificate(options.publicKeyPem, options.lifetimeMs, options.now ?? Date.now());
  cert.setSubject([{ name: 'commonName', value: options.names[0] ?? 'localhost' }]);
  const altNames = options.names.map((name) => (IPV4.test(name) || name.includes(':') ? { type: 7, ip: name } : { type: 2, value: name }));
  signWithAuthority(cert, authority, [
    { name: 'basicConstraints', cA: false, critical: true },
    leafKeyUsage(cert),
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
  return issued(cert, serial);
}

const SHA256_WITH_RSA = '1.2.840.113549.1.1.11';

/**
 * Reads a CSR and checks its self-signature with node:crypto, returning the
 * public key it proves possession of. Only sha256WithRSAEncryption is accepted:
 * that is what our agents send.
 */
export function readCertificateRequest(csrPem: string): { publicKeyPem: string } {
  const forge = nodeForge();
  let csr: Forge.pki.CertificateSigningRequest;
  try {
    csr = forge.pki.certificationRequestFromPem(csrPem, false, false);
  } catch (error) {
    throw new FleetError('invalid_argument', `the certificate signing request cannot be parsed: ${(error as Error).message}`);
  }
  const parsed = csr as unknown as { certificationRequestInfo?: Forge.asn1.Asn1; signature?: string; signatureOid?: string };
  if (!parsed.certificationRequestInfo || !parsed.signature || parsed.signatureOid !== SHA256_WITH_RSA || !csr.publicKey) {
    throw new FleetError('invalid_argument', 'the certificate signing request must be an RSA request signed with SHA-256');
  }
  const publicKeyPem = forge.pki.publicKeyToPem(csr.publicKey);
  const signedBytes = Buffer.from(forge.asn1.toDer(parsed.certificationRequestInfo).getBytes(), 'binary');
  const signature = Buffer.from(parsed.signature, 'binary');
  if (!verify('sha256', signedBytes, publicKeyPem, signature)) {
    throw new FleetError('invalid_argument', 'the certificate signing request is not signed by the key it carries');
  }
  return { publicKeyPem };
}

/** A client certificate for an agent: CN = its name, SAN URI = its id, clientAuth only. */
export function issueAgentCertificate(
  authority: CertificateAuthority,
  options: { publicKeyPem: string; agentId: string; name: string; lifetimeMs: number; now?: number },
): IssuedCertificate {
  const { cert, serial } = baseCertificate(options.publicKeyPem, options.lifetimeMs, options.now ?? Date.now());
  cert.setSubject([
    { name: 'commonName', value: options.name },
    { name: 'organizationName', value: 'fleetmesh agents' },
  ]);
  signWithAuthority(cert, authority, [
    { name: 'basicConstraints', cA: false, critical: true },
    leafKeyUsage(cert),
    { name: 'extKeyUsage', clientAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 6, value: `${AGENT_URI_PREFIX}${options.agentId}` }] },
  ]);
  return issued(cert, serial);
}

/**
 * A broker's certificate on the cluster's bus: CN and SAN URI name the broker
 * id, and its key signs the keys the broker speaks with on the bus
 * (broker/cluster/bus-keys.ts). It authenticates nothing over TLS.
 */
export function issueBrokerCertificate(
  authority: CertificateAuthority,
  options: { publicKeyPem: string; brokerId: string; lifetimeMs: number; now?: number },
): IssuedCertificate {
  const { cert, serial } = baseCertificate(options.publicKeyPem, options.lifetimeMs, options.now ?? Date.now());
  cert.setSubject([
    { name: 'commonName', value: options.brokerId },
    { name: 'organizationName', value: 'fleetmesh brokers' },
  ]);
  signWithAuthority(cert, authority, [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, critical: true },
    { name: 'subjectAltName', altNames: [{ type: 6, value: `${BROKER_URI_PREFIX}${options.brokerId}` }] },
  ]);
  return issued(cert, serial);
}

/** The broker id in a `subjectaltname` string as Node renders it (`URI:spiffe://fleetmesh/broker/<id>`). */
export function brokerIdFromAltNames(altNames: string | undefined): string | undefined {
  return uriSuffix(altNames, BROKER_URI_PREFIX);
}

interface CertificateFacts {
  serial: string;
  notBefore: Date;
  notAfter: Date;
  subjectCommonName: string;
  /** The agent id from the SAN URI, when there is one. */
  agentId: string | undefined;
  publicKeyPem: string;
}

/** Reads the facts we key on from a PEM certificate (parsing only, no trust decision). */
export function readCertificate(certificatePem: string): CertificateFacts {
  const x509 = new X509Certificate(certificatePem);
  return {
    serial: x509.serialNumber.toLowerCase().replace(/^0+/, ''),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    subjectCommonName: /CN=([^\n]+)/.exec(x509.subject)?.[1] ?? '',
    agentId: agentIdFromAltNames(x509.subjectAltName),
    publicKeyPem: x509.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** The agent id in a `subjectaltname` string as Node renders it (`URI:spiffe://fleetmesh/agent/<id>`). */
export function agentIdFromAltNames(altNames: string | undefined): string | undefined {
  return uriSuffix(altNames, AGENT_URI_PREFIX);
}

function uriSuffix(altNames: string | undefined, prefix: string): string | undefined {
  if (!altNames) return undefined;
  for (const part of altNames.split(',')) {
    const item = part.trim();
    if (item.startsWith(`URI:${prefix}`)) return item.slice(`URI:${prefix}`.length);
  }
  return undefined;
}

/** Serial numbers compared the way Node prints them (upper-case hex without leading zeros) and we store them. */
export function normalizeSerial(serial: string): string {
  return serial.toLowerCase().replace(/^0+/, '');
}
