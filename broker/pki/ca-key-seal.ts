import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { FleetError } from '../../shared/errors/fleet-error.ts';

/** scrypt's cost: about 0.1 s to open a sealed key, once per broker start or rotation, and as much per guess. */
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

interface Sealed {
  v: 1;
  salt: string;
  iv: string;
  data: string;
  tag: string;
}

/**
 * A CA private key sealed with the operator's CA key secret (scrypt, then
 * AES-256-GCM): what a shared store keeps instead of the key, so that neither
 * the database nor a broker without the secret gives the key away.
 */
export function sealCaKey(privateKeyPem: string, secret: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', scryptSync(secret, salt, 32, SCRYPT), iv);
  const data = Buffer.concat([cipher.update(privateKeyPem, 'utf8'), cipher.final()]);
  const sealed: Sealed = {
    v: 1,
    salt: salt.toString('base64'),
    iv: iv.toString('base64'),
    data: data.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
  return JSON.stringify(sealed);
}

/** The key a sealed text holds; `forbidden` when the secret is not the one it was sealed with. */
export function unsealCaKey(sealedText: string, secret: string): string {
  let sealed: Sealed;
  try {
    sealed = JSON.parse(sealedText) as Sealed;
  } catch {
    throw new FleetError('internal', 'a sealed CA key in the store cannot be read');
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', scryptSync(secret, Buffer.from(sealed.salt, 'base64'), 32, SCRYPT), Buffer.from(sealed.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new FleetError('forbidden', 'the CA key secret does not open the CA key sealed in the store', {
      hint: 'Give every broker that may sign the same --ca-key-secret-file (or FLEETMESH_CA_KEY_SECRET) the CA was sealed with.',
    });
  }
}
