import { createPrivateKey, X509Certificate } from 'node:crypto';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { readSecretFile } from '../../shared/options/secret-file.ts';
import { type CertificateAuthority, certificatePin } from '../../shared/pki/certificates.ts';
import { ensureIdentity, parseIdentityToken } from '../auth/identities.ts';
import { ensureJoinToken, parseJoinToken } from '../enrollment/join-tokens.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** The identity a `--admin-token-file` token is registered as. */
export const BOOTSTRAP_ADMIN_NAME = 'admin';
/**
 * Supplied tokens are renewed for this long at every start: they live as long
 * as the deployment that mounts them, and `fleetmesh token revoke` or
 * `fleetmesh identity revoke` ends them for good.
 */
const BOOTSTRAP_TOKEN_TTL_MS = 365 * 86_400_000;

/**
 * What an operator can hand a broker instead of creating it on the broker's
 * machine: the CA, a reusable join token, an admin bearer token (files that
 * `fleetmesh bootstrap` writes and Docker or Kubernetes mount as secrets).
 */
export interface BrokerBootstrap {
  ca: CertificateAuthority | undefined;
  /**
   * The CA's certificate without its key (`--ca-cert-file` alone): a broker of
   * a cluster that may not hold the key is told which CA the store must have,
   * and waits for the broker that brings it rather than make one of its own.
   */
  caCertificatePem?: string | undefined;
  joinToken: string | undefined;
  adminToken: string | undefined;
}

export const NO_BOOTSTRAP: BrokerBootstrap = { ca: undefined, joinToken: undefined, adminToken: undefined };

export interface BootstrapPaths {
  caCertFile: string | undefined;
  caKeyFile: string | undefined;
  joinTokenFile: string | undefined;
  adminTokenFile: string | undefined;
}

/** Reads and checks the files at option time, so a bad one stops the broker before anything starts. */
export function readBrokerBootstrap(paths: BootstrapPaths, { sharedStore = false } = {}): BrokerBootstrap {
  // Only a broker of a shared store may be given the certificate alone: another broker brings the key.
  const certOnly = sharedStore && paths.caKeyFile === undefined;
  if ((paths.caCertFile === undefined) !== (paths.caKeyFile === undefined) && !(certOnly && paths.caCertFile !== undefined)) {
    throw new FleetError(
      'invalid_argument',
      `--ca-cert-file and --ca-key-file go together; only ${paths.caCertFile ? '--ca-cert-file' : '--ca-key-file'} is set`,
      {
        hint: 'Give both (fleetmesh bootstrap writes ca.crt and ca.key), or neither to let the broker create its CA; a broker of a cluster (--store postgres://…) may be given --ca-cert-file alone.',
      },
    );
  }
  const ca = paths.caCertFile && paths.caKeyFile ? readCa(paths.caCertFile, paths.caKeyFile) : undefined;
  const caCertificatePem = paths.caCertFile && !paths.caKeyFile ? readCaCertificate(paths.caCertFile) : undefined;
  const joinToken = paths.joinTokenFile === undefined ? undefined : readSecretFile(paths.joinTokenFile, '--join-token-file');
  if (joinToken !== undefined && !parseJoinToken(joinToken)) {
    throw new FleetError('invalid_argument', `--join-token-file ${paths.joinTokenFile} does not hold a join token`, {
      hint: 'A join token looks like fm1.<16 hex>.<43 characters>; fleetmesh bootstrap writes one.',
    });
  }
  const adminToken = paths.adminTokenFile === undefined ? undefined : readSecretFile(paths.adminTokenFile, '--admin-token-file');
  if (adminToken !== undefined && !parseIdentityToken(adminToken)) {
    throw new FleetError('invalid_argument', `--admin-token-file ${paths.adminTokenFile} does not hold a bearer token`, {
      hint: 'A bearer token looks like fmc1.<16 hex>.<43 characters>; fleetmesh bootstrap writes one.',
    });
  }
  return { ca, ...(caCertificatePem ? { caCertificatePem } : {}), joinToken, adminToken };
}

function readCaCertificate(certFile: string): string {
  const certificatePem = readSecretFile(certFile, '--ca-cert-file');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certificatePem);
  } catch {
    throw new FleetError('invalid_argument', `--ca-cert-file ${certFile} is not a PEM certificate`);
  }
  if (!certificate.ca) throw new FleetError('invalid_argument', `--ca-cert-file ${certFile} is not a CA certificate`);
  return `${certificatePem}\n`;
}

function readCa(certFile: string, keyFile: string): CertificateAuthority {
  const certificatePem = readCaCertificate(certFile).trim();
  const privateKeyPem = readSecretFile(keyFile, '--ca-key-file');
  const certificate = new X509Certificate(certificatePem);
  let matches: boolean;
  try {
    matches = certificate.checkPrivateKey(createPrivateKey(privateKeyPem));
  } catch {
    throw new FleetError('invalid_argument', `--ca-key-file ${keyFile} is not a PEM private key`);
  }
  if (!matches) throw new FleetError('invalid_argument', `--ca-key-file ${keyFile} is not the key of --ca-cert-file ${certFile}`);
  return { certificatePem: `${certificatePem}\n`, privateKeyPem: `${privateKeyPem}\n` };
}

/**
 * Registers the supplied tokens in the store at broker start (hashed, like any
 * other). Logs token ids only, never a secret.
 */
export async function applyBrokerBootstrap(store: BrokerStore, bootstrap: BrokerBootstrap, log: Logger, now = Date.now()): Promise<void> {
  if (bootstrap.ca) log.info('using the CA given by --ca-cert-file', { ca_pin: certificatePin(bootstrap.ca.certificatePem) });
  if (bootstrap.joinToken !== undefined) {
    const { id, usable } = await ensureJoinToken(store, bootstrap.joinToken, { ttlMs: BOOTSTRAP_TOKEN_TTL_MS, now });
    if (usable) log.info('join token from --join-token-file registered (reusable)', { token_id: id });
    else log.warn('the join token from --join-token-file was revoked; agents cannot enroll with it', { token_id: id });
  }
  if (bootstrap.adminToken !== undefined) {
    const { id, usable, replaced } = await ensureIdentity(store, bootstrap.adminToken, {
      name: BOOTSTRAP_ADMIN_NAME,
      level: 3,
      ttlMs: BOOTSTRAP_TOKEN_TTL_MS,
      now,
    });
    if (replaced)
      log.warn(`identity ${BOOTSTRAP_ADMIN_NAME} now belongs to the token from --admin-token-file; the previous one was revoked`, { revoked_id: replaced });
    if (usable) log.info(`identity ${BOOTSTRAP_ADMIN_NAME} from --admin-token-file registered (level 3)`, { identity_id: id });
    else log.warn('the identity from --admin-token-file was revoked; its token is refused', { identity_id: id });
  }
}
