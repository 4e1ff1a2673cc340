import { createCipheriv, createDecipheriv, type KeyObject, randomBytes, sign, verify } from 'node:crypto';

/**
 * How one bus message travels between brokers:
 *
 *   byte 0     format version (1)
 *   byte 1     'S' signed (body in clear) or 'E' sealed (body encrypted)
 *   bytes 2-3  header length, big-endian
 *   header     JSON: `f` sender broker id, `s` sequence number (one counter
 *              per sender key: a repeated number is a replay), `g` 1 when a
 *              signature follows, and for sealed messages `r`: for each
 *              recipient broker id, the message key wrapped with the key that
 *              sender and recipient share (bus-trust.ts)
 *   body       the message JSON, or for sealed messages iv, ciphertext and tag
 *              (AES-256-GCM under the message key)
 *   signature  64 bytes of Ed25519 over the subject and everything above, when `g` is 1
 *
 * The subject is part of what is signed and of the authenticated data, so a
 * message cannot be replayed on another subject. A sealed message to one
 * recipient needs no signature: only the sender and that recipient hold the
 * key its message key is wrapped with. One to several recipients is signed
 * too, or any of them could rewrite it for the others.
 */
export const ENVELOPE_VERSION = 1;
const SIGNED = 0x53;
const SEALED = 0x45;
const SIGNATURE_BYTES = 64;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const MAX_HEADER_BYTES = 0xffff;

export interface EnvelopeHeader {
  /** The broker that sent it, as it claims: believed only once the signature or a wrapped key checks out. */
  f: string;
  s: number;
  g?: 1;
  r?: Record<string, string>;
}

/** A message as read off the wire, before anything in it is checked. */
export interface ReadEnvelope {
  sealed: boolean;
  header: EnvelopeHeader;
  /** The bytes the signature covers (without the subject), and the signature, when there is one. */
  signed: Buffer;
  signature: Buffer | undefined;
  /** The clear body (signed messages) or iv, ciphertext and tag (sealed ones). */
  body: Buffer;
  /** Version, kind, header length and header: authenticated data of a sealed body. */
  prefix: Buffer;
}

const subjectBytes = (subject: string) => Buffer.from(`${subject}\u0000`, 'utf8');

function frame(kind: number, header: EnvelopeHeader, body: Buffer): { prefix: Buffer; unsigned: Buffer } {
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  if (headerBytes.length > MAX_HEADER_BYTES) throw new Error('bus envelope header too large');
  const prefix = Buffer.alloc(4 + headerBytes.length);
  prefix[0] = ENVELOPE_VERSION;
  prefix[1] = kind;
  prefix.writeUInt16BE(headerBytes.length, 2);
  headerBytes.copy(prefix, 4);
  return { prefix, unsigned: Buffer.concat([prefix, body]) };
}

function withSignature(subject: string, unsigned: Buffer, signingKey: KeyObject): Buffer {
  const signature = sign(null, Buffer.concat([subjectBytes(subject), unsigned]), signingKey);
  return Buffer.concat([unsigned, signature]);
}

/** A message in clear, signed by the sender's Ed25519 key. */
export function signEnvelope(subject: string, from: string, seq: number, body: Uint8Array, signingKey: KeyObject): Buffer {
  const { unsigned } = frame(SIGNED, { f: from, s: seq, g: 1 }, Buffer.from(body));
  return withSignature(subject, unsigned, signingKey);
}

/** AES-256-GCM with a fresh iv: iv, ciphertext and tag in one buffer. */
export function encrypt(key: Buffer, plain: Uint8Array, aad: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
}

/** The plain bytes, or undefined when the key, the data or the authenticated data do not match. */
export function decrypt(key: Buffer, sealed: Buffer, aad: Buffer): Buffer | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** What a message key is wrapped under: the subject, both brokers and the sequence number, so a wrapped key fits one place only. */
export function wrapContext(subject: string, from: string, to: string, seq: number): Buffer {
  return Buffer.from(`fleetmesh-bus-wrap\u0000${subject}\u0000${from}\u0000${to}\u0000${seq}`, 'utf8');
}

/**
 * A message only `recipients` can read: a fresh message key encrypts the
 * body, and is wrapped for each recipient with the key that recipient shares
 * with the sender (`pairKey`). Signed when there is more than one recipient,
 * or when `alwaysSign`.
 */
export function sealEnvelope(
  subject: string,
  from: string,
  seq: number,
  body: Uint8Array,
  recipients: readonly string[],
  pairKey: (recipient: string) => Buffer,
  signingKey: KeyObject,
  alwaysSign = false,
): Buffer {
  const messageKey = randomBytes(KEY_BYTES);
  const wrapped: Record<string, string> = {};
  for (const recipient of recipients) {
    wrapped[recipient] = encrypt(pairKey(recipient), messageKey, wrapContext(subject, from, recipient, seq)).toString('base64');
  }
  const signs = alwaysSign || recipients.length > 1;
  const header: EnvelopeHeader = { f: from, s: seq, r: wrapped, ...(signs ? { g: 1 as const } : {}) };
  // The body's authenticated data is the prefix, which the body's own length does not change: frame twice.
  const { prefix } = frame(SEALED, header, Buffer.alloc(0));
  const { unsigned } = frame(SEALED, header, encrypt(messageKey, body, Buffer.concat([subjectBytes(subject), prefix])));
  return signs ? withSignature(subject, unsigned, signingKey) : unsigned;
}

/** Splits a message into its parts without trusting any of them; undefined when it is not an envelope at all. */
export function readEnvelope(data: Uint8Array): ReadEnvelope | undefined {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.length < 4 || bytes[0] !== ENVELOPE_VERSION || (bytes[1] !== SIGNED && bytes[1] !== SEALED)) return undefined;
  const headerLength = bytes.readUInt16BE(2);
  if (bytes.length < 4 + headerLength) return undefined;
  let header: EnvelopeHeader;
  try {
    header = JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8')) as EnvelopeHeader;
  } catch {
    return undefined;
  }
  if (typeof header !== 'object' || header === null || typeof header.f !== 'string' || !Number.isSafeInteger(header.s) || header.s < 0) return undefined;
  const sealed = bytes[1] === SEALED;
  if (sealed && (typeof header.r !== 'object' || header.r === null)) return undefined;
  const signedLength = header.g === 1 ? bytes.length - SIGNATURE_BYTES : bytes.length;
  if (signedLength < 4 + headerLength) return undefined;
  return {
    sealed,
    header,
    signed: bytes.subarray(0, signedLength),
    signature: header.g === 1 ? bytes.subarray(signedLength) : undefined,
    body: bytes.subarray(4 + headerLength, signedLength),
    prefix: bytes.subarray(0, 4 + headerLength),
  };
}

/** Whether the signature is the sender's over the subject and the message. */
export function signatureHolds(subject: string, envelope: ReadEnvelope, signingKey: KeyObject): boolean {
  if (!envelope.signature) return false;
  try {
    return verify(null, Buffer.concat([subjectBytes(subject), envelope.signed]), signingKey, envelope.signature);
  } catch {
    return false;
  }
}

/** The body of a sealed message for `self`, with the key it shares with the sender; undefined when it is not for `self` or does not decrypt. */
export function openSealed(subject: string, envelope: ReadEnvelope, self: string, pairKey: Buffer): Buffer | undefined {
  const wrapped = envelope.header.r?.[self];
  if (typeof wrapped !== 'string') return undefined;
  const messageKey = decrypt(pairKey, Buffer.from(wrapped, 'base64'), wrapContext(subject, envelope.header.f, self, envelope.header.s));
  if (!messageKey || messageKey.length !== KEY_BYTES) return undefined;
  return decrypt(messageKey, envelope.body, Buffer.concat([subjectBytes(subject), envelope.prefix]));
}
