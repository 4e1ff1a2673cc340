import { createHash, createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:tls';
import type Forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { createCertificateRequest } from './certificate-request.ts';
import {
  certificatePin,
  createCertificateAuthority,
  createKeyPair,
  createServingKeyPair,
  issueAgentCertificate,
  issueServerCertificate,
  publicKeyFingerprint,
  readCertificate,
  readCertificateRequest,
} from './certificates.ts';

describe('the fleet PKI', () => {
  it('issues agent certificates Node verifies against the CA, for the key in the request', async () => {
    const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 86_400_000 });
    const keys = await createKeyPair();
    const request = readCertificateRequest(createCertificateRequest(keys, 'ignored'));
    const issued = issueAgentCertificate(ca, { publicKeyPem: request.publicKeyPem, agentId: 'abc', name: 'web-1', lifetimeMs: 3_600_000 });
    const x509 = new X509Certificate(issued.certificatePem);
    expect(x509.verify(new X509Certificate(ca.certificatePem).publicKey)).toBe(true);
    expect(x509.subjectAltName).toBe('URI:spiffe://fleetmesh/agent/abc');
    expect(x509.checkPrivateKey((await import('node:crypto')).createPrivateKey(keys.privateKeyPem))).toBe(true);
    expect(readCertificate(issued.certificatePem)).toMatchObject({ agentId: 'abc', subjectCommonName: 'web-1', serial: issued.serial });
  });

  it('signs exactly as forge itself would, and a certificate forge reads verifies under the CA in forge too', async () => {
    const forge = createRequire(import.meta.url)('node-forge') as typeof Forge;
    const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 86_400_000 });
    const keys = await createKeyPair();
    const issued = issueAgentCertificate(ca, { publicKeyPem: keys.publicKeyPem, agentId: 'abc', name: 'web-1', lifetimeMs: 3_600_000 });
    // PKCS #1 v1.5 signatures are deterministic: forge signing the same to-be-signed part gives the same bytes.
    const again = forge.pki.certificateFromPem(issued.certificatePem);
    again.sign(forge.pki.privateKeyFromPem(ca.privateKeyPem), forge.md.sha256.create());
    expect(forge.pki.certificateToPem(again)).toBe(issued.certificatePem);
    expect(forge.pki.certificateFromPem(ca.certificatePem).verify(forge.pki.certificateFromPem(issued.certificatePem))).toBe(true);
    expect(new X509Certificate(ca.certificatePem).verify(new X509Certificate(ca.certificatePem).publicKey)).toBe(true);
  });

  it('writes requests the broker reads for any agent name, long or not ASCII', async () => {
    const keys = await createKeyPair();
    for (const name of ['web_1', 'hôte-ünïcode', 'x'.repeat(300)]) {
      const pem = createCertificateRequest(keys, name);
      expect(pem).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n[A-Za-z0-9+/=\n]+\n-----END CERTIFICATE REQUEST-----\n$/);
      expect(publicKeyFingerprint(readCertificateRequest(pem).publicKeyPem)).toBe(publicKeyFingerprint(keys.publicKeyPem));
    }
  });

  it('refuses a request whose signature does not match its key', async () => {
    const keys = await createKeyPair();
    const other = await createKeyPair();
    // A request carrying one key but signed with another.
    const forged = createCertificateRequest({ publicKeyPem: keys.publicKeyPem, privateKeyPem: other.privateKeyPem }, 'x');
    expect(() => readCertificateRequest(forged)).toThrow(/not signed by the key it carries/);
    expect(() => readCertificateRequest('not a csr')).toThrow(/cannot be parsed/);
  });

  it('names every advertised host and address in the server certificate, and pins the CA by hash', async () => {
    const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 86_400_000 });
    const keys = await createKeyPair();
    const server = issueServerCertificate(ca, { publicKeyPem: keys.publicKeyPem, names: ['broker.example', 'localhost', '127.0.0.1'], lifetimeMs: 86_400_000 });
    const x509 = new X509Certificate(server.certificatePem);
    expect(x509.checkHost('broker.example')).toBe('broker.example');
    expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x509.checkHost('elsewhere.example')).toBeUndefined();
    expect(certificatePin(ca.certificatePem)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('certifies a P-256 serving key that TLS serves and a client verifies under the RSA CA', async () => {
    const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 86_400_000 });
    const keys = await createServingKeyPair();
    const server = issueServerCertificate(ca, { publicKeyPem: keys.publicKeyPem, names: ['localhost', '127.0.0.1'], lifetimeMs: 86_400_000 });
    const x509 = new X509Certificate(server.certificatePem);
    expect(x509.verify(new X509Certificate(ca.certificatePem).publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(keys.privateKeyPem))).toBe(true);
    expect(x509.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const der = x509.raw;
    // subjectKeyIdentifier (2.5.29.14): an OCTET STRING of the SHA-1 of the key's point, the last 65 bytes of its SPKI.
    const point = x509.publicKey.export({ type: 'spki', format: 'der' }).subarray(-65);
    const ski = Buffer.concat([Buffer.from([0x06, 0x03, 0x55, 0x1d, 0x0e, 0x04, 0x16, 0x04, 0x14]), createHash('sha1').update(point).digest()]);
    expect(der.includes(ski)).toBe(true);
    // keyUsage (2.5.29.15), critical: digitalSignature only, no keyEncipherment for a key that cannot encipher.
    expect(der.includes(Buffer.from([0x06, 0x03, 0x55, 0x1d, 0x0f, 0x01, 0x01, 0xff, 0x04, 0x04, 0x03, 0x02, 0x07, 0x80]))).toBe(true);

    const tlsServer = createServer({ key: keys.privateKeyPem, cert: server.certificatePem }, (socket) => socket.end('hello'));
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    try {
      const port = (tlsServer.address() as { port: number }).port;
      const { text, curve } = await new Promise<{ text: string; curve: string | undefined }>((resolve, reject) => {
        const socket = connect({ port, host: '127.0.0.1', servername: 'localhost', ca: ca.certificatePem }, () => {
          const curve = socket.getPeerCertificate().asn1Curve;
          let text = '';
          socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
          socket.on('end', () => resolve({ text, curve }));
        });
        socket.on('error', reject);
      });
      expect(text).toBe('hello');
      expect(curve).toBe('prime256v1');
    } finally {
      tlsServer.close();
    }
  });

  it('refuses to certify a key of another kind, in words', async () => {
    const ca = await createCertificateAuthority({ commonName: 'test CA', lifetimeMs: 86_400_000 });
    const { publicKey } = generateKeyPairSync('ed25519');
    const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(() => issueServerCertificate(ca, { publicKeyPem, names: ['localhost'], lifetimeMs: 86_400_000 })).toThrow(
      'an ed25519 key cannot be certified: only RSA and P-256 keys can',
    );
  });
});
