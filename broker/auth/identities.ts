import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Level } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { FULL_ACCESS, GrantSet, parseGrant } from './grants.ts';

/** `fmc1.<id>.<secret>`: an MCP client's bearer token. */
const TOKEN_PATTERN = /^fmc1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;
export const DEFAULT_IDENTITY_TTL_MS = 90 * 86_400_000;

/** Who is calling: an identity as the MCP edge sees it. */
export interface Identity {
  id: string;
  name: string;
  level: Level;
  grants: GrantSet;
  expiresAt: number;
}

const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');

export function createIdentity(
  store: BrokerStore,
  options: { name: string; level: Level; grants?: string[]; ttlMs?: number; now?: number },
): { token: string; id: string; expiresAt: number } {
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,62}$/.test(options.name)) {
    throw new FleetError('invalid_argument', `"${options.name}" is not a valid identity name`, { hint: 'Use 1-63 letters, digits, ".", "_", "@" or "-".' });
  }
  const grants = options.grants?.length ? options.grants : FULL_ACCESS;
  for (const grant of grants) parseGrant(grant);
  if (store.identities.findLiveByName(options.name)) {
    throw new FleetError('conflict', `an identity named "${options.name}" exists already`, {
      hint: 'Revoke it first (fleetmesh identity revoke) or pick another name.',
    });
  }
  const id = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const now = options.now ?? Date.now();
  const expiresAt = now + (options.ttlMs ?? DEFAULT_IDENTITY_TTL_MS);
  store.identities.insert({ id, name: options.name, secretSha256: hash(secret), level: options.level, grants, createdAt: now, expiresAt });
  return { token: `fmc1.${id}.${secret}`, id, expiresAt };
}

/** Why a bearer token was refused, in words for the WWW-Authenticate header. */
export class TokenRefused extends Error {}

/** The identity a bearer token proves, or TokenRefused with the reason. */
export function verifyBearerToken(store: BrokerStore, token: string, now = Date.now()): Identity {
  const match = TOKEN_PATTERN.exec(token.trim());
  if (!match) throw new TokenRefused('the token is malformed');
  const row = store.identities.get(match[1] ?? '');
  if (!row || !timingSafeEqual(Buffer.from(hash(match[2] ?? ''), 'hex'), Buffer.from(row.secretSha256, 'hex')))
    throw new TokenRefused('the token is not known');
  if (row.revokedAt !== null) throw new TokenRefused('the token was revoked');
  if (row.expiresAt <= now) throw new TokenRefused('the token has expired');
  return { id: row.id, name: row.name, level: row.level, grants: new GrantSet(row.grants), expiresAt: row.expiresAt };
}
