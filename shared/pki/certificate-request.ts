import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import type { KeyPair } from './certificates.ts';

/**
 * A PKCS#10 certificate request (RFC 2986), written with node:crypto and a few
 * lines of DER: what an agent sends to enrol and to renew. node-forge's pure
 * JavaScript RSA signing was a tenth of a new agent's CPU in its first minutes,
 * and loading forge kept about 5 MiB of an idle agent's memory
 * (docs/performance.md). The broker reads requests with
 * `readCertificateRequest` (certificates.ts) and ignores their subject.
 */

/** A DER element: tag, definite length, content. */
function element(tag: number, content: Buffer): Buffer {
  const length = content.length;
  const header =
    length < 0x80
      ? Buffer.from([tag, length])
      : length < 0x100
        ? Buffer.from([tag, 0x81, length])
        : length < 0x10000
          ? Buffer.from([tag, 0x82, length >> 8, length & 0xff])
          : Buffer.from([tag, 0x83, length >> 16, (length >> 8) & 0xff, length & 0xff]);
  return Buffer.concat([header, content]);
}

const sequence = (...parts: Buffer[]) => element(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]) => element(0x31, Buffer.concat(parts));
/** id-at-commonName, 2.5.4.3. */
const COMMON_NAME = Buffer.from([0x06, 0x03, 0x55, 0x04, 0x03]);
/** sha256WithRSAEncryption, 1.2.840.113549.1.1.11, with its NULL parameters. */
const SHA256_WITH_RSA = sequence(Buffer.from([0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]), Buffer.from([0x05, 0x00]));

/** A PKCS#10 request for the key pair, signed with its private key (proof of possession), in PEM. */
export function createCertificateRequest(keys: KeyPair, commonName: string): string {
  const info = sequence(
    Buffer.from([0x02, 0x01, 0x00]), // version 0
    sequence(set(sequence(COMMON_NAME, element(0x0c, Buffer.from(commonName, 'utf8'))))), // subject, a UTF8String CN
    createPublicKey(keys.publicKeyPem).export({ type: 'spki', format: 'der' }),
    Buffer.from([0xa0, 0x00]), // attributes: none
  );
  const signature = sign('sha256', info, createPrivateKey(keys.privateKeyPem));
  const der = sequence(info, SHA256_WITH_RSA, element(0x03, Buffer.concat([Buffer.from([0x00]), signature])));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE REQUEST-----\n${lines.join('\n')}\n-----END CERTIFICATE REQUEST-----\n`;
}
