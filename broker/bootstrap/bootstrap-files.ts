import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { certificatePin, createCertificateAuthority, createKeyPair, issueServerCertificate } from '../../shared/pki/certificates.ts';
import { writeFileAtomic, writePrivateKey } from '../../shared/pki/key-files.ts';
import { newIdentityToken, parseIdentityToken } from '../auth/identities.ts';
import { newJoinToken, parseJoinToken } from '../enrollment/join-tokens.ts';
import { CA_LIFETIME_MS } from '../pki/broker-authority.ts';

/**
 * The files `fleetmesh bootstrap` writes, one secret each, named so that
 * `kubectl create secret generic … --from-file=DIR` gives the keys the Helm
 * chart reads. Secrets are mode 0600; the CA certificate and the pin are not
 * secret (0644).
 */
export const BOOTSTRAP_FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  joinToken: 'join-token',
  caPin: 'ca-pin',
  adminToken: 'admin-token',
} as const;

/**
 * What only a broker cluster uses: the TLS certificate and key of NATS for the
 * brokers' bus (the cluster deploy files mount them into NATS), and the secret
 * the CA key is sealed with in the cluster's store (`--ca-key-secret-file`).
 */
export const BUS_TLS_FILES = { cert: 'bus.crt', key: 'bus.key' } as const;
export const CA_KEY_SECRET_FILE = 'ca-key-secret';

/** The names the bus's TLS certificate carries: NATS as the cluster deploy files run it (service `nats`). */
const BUS_SERVER_NAMES = ['nats', 'localhost', '127.0.0.1'];

export interface WrittenBootstrap {
  dir: string;
  pin: string;
  joinTokenId: string;
  adminTokenId: string;
}

/**
 * Makes a broker CA, a join token and an admin bearer token without any broker
 * running, and writes them to `dir`. Refuses a dir that already holds any of
 * them: overwriting a CA would orphan every agent enrolled with it.
 */
export async function writeBootstrapFiles(dir: string, now = Date.now()): Promise<WrittenBootstrap> {
  const present = [...Object.values(BOOTSTRAP_FILES), ...Object.values(BUS_TLS_FILES), CA_KEY_SECRET_FILE].filter((file) => existsSync(join(dir, file)));
  if (present.length) {
    throw new FleetError('conflict', `${dir} already holds ${present.join(', ')}`, {
      hint: 'Keep using them, or choose another --out: a new CA means every agent enrolls again.',
    });
  }
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new FleetError('invalid_argument', `cannot write to ${dir}: ${code === 'EACCES' ? 'permission denied' : (error as Error).message}`, {
      hint: 'Choose an --out this user may create and write; in a container, a mounted directory its uid owns.',
    });
  }
  const ca = await createCertificateAuthority({ commonName: 'fleetmesh CA', lifetimeMs: CA_LIFETIME_MS, now });
  const pin = certificatePin(ca.certificatePem);
  // NATS serves the brokers' bus over TLS with a certificate of the same CA, which the brokers already trust.
  const busKeys = await createKeyPair();
  const busCertificate = issueServerCertificate(ca, { publicKeyPem: busKeys.publicKeyPem, names: BUS_SERVER_NAMES, lifetimeMs: CA_LIFETIME_MS, now });
  const joinToken = newJoinToken();
  const adminToken = newIdentityToken();
  writePrivateKey(join(dir, BOOTSTRAP_FILES.caKey), ca.privateKeyPem);
  writeFileAtomic(join(dir, BOOTSTRAP_FILES.caCert), ca.certificatePem);
  writePrivateKey(join(dir, BOOTSTRAP_FILES.joinToken), `${joinToken}\n`);
  writePrivateKey(join(dir, BOOTSTRAP_FILES.adminToken), `${adminToken}\n`);
  writeFileAtomic(join(dir, BOOTSTRAP_FILES.caPin), `${pin}\n`);
  writeFileAtomic(join(dir, BUS_TLS_FILES.cert), busCertificate.certificatePem);
  writePrivateKey(join(dir, BUS_TLS_FILES.key), busKeys.privateKeyPem);
  writePrivateKey(join(dir, CA_KEY_SECRET_FILE), `${randomBytes(32).toString('hex')}\n`);
  return { dir, pin, joinTokenId: parseJoinToken(joinToken)?.id ?? '', adminTokenId: parseIdentityToken(adminToken)?.id ?? '' };
}
