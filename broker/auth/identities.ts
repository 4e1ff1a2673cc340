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

/** A fresh bearer token, not registered anywhere yet (`fleetmesh bootstrap` writes it to a file). */
export function newIdentityToken(): string {
  return `fmc1.${randomBytes(8).toString('hex')}.${randomBytes(32).toString('base64url')}`;
}

/** The id and secret of a well-formed bearer token, or undefined. */
export function parseIdentityToken(token: string): { id: string; secret: string } | undefined {
  const match = TOKEN_PATTERN.exec(token.trim());
  return match ? { id: match[1] ?? '', secret: match[2] ?? '' } : undefined;
}

function checkIdentityName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,62}$/.test(name)) {
    throw new FleetError('invalid_argument', `"${name}" is not a valid identity name`, { hint: 'Use 1-63 letters, digits, ".", "_", "@" or "-".' });
  }
}

export async function createIdentity(
  store: BrokerStore,
  options: { name: string; level: Level; grants?: string[]; ttlMs?: number; now?: number },
): Promise<{ token: string; id: string; expiresAt: number }> {
  checkIdentityName(options.name);
  const grants = options.grants?.length ? options.grants : FULL_ACCESS;
  for (const grant of grants) parseGrant(grant);
  if (await store.identities.findLiveByName(options.name)) {
    throw new FleetError('conflict', `an identity named "${options.name}" exists already`, {
      hint: 'Revoke it first (fleetmesh identity revoke) or pick another name.',
    });
  }
  const token = newIdentityToken();
  const { id, secret } = parseIdentityToken(token) as { id: string; secret: string };
  const now = options.now ?? Date.now();
  const expiresAt = now + (options.ttlMs ?? DEFAULT_IDENTITY_TTL_MS);
  await store.identities.insert({ id, name: options.name, secretSha256: hash(secret), level: options.level, grants, createdAt: now, expiresAt });
  return { token, id, expiresAt };
}

/**
 * Registers an identity whose token the operator supplies (`--admin-token-file`),
 * or renews its expiry when it is registered already. The token decides who
 * holds the name: another live identity of that name is revoked (`replaced`
 * names it). A revoked token stays revoked, whatever restarts follow.
 */
export function ensureIdentity(
  store: BrokerStore,
  token: string,
  options: { name: string; level: Level; ttlMs: number; now?: number },
): Promise<{ id: string; usable: boolean; replaced: string | undefined }> {
  checkIdentityName(options.name);
  const parsed = parseIdentityToken(token);
  if (!parsed) throw new FleetError('invalid_argument', 'the bearer token is malformed', { hint: 'A bearer token looks like fmc1.<16 hex>.<43 characters>.' });
  const now = options.now ?? Date.now();
  const expiresAt = now + options.ttlMs;
  const secretSha256 = hash(parsed.secret);
  return store.transaction(async () => {
    const row = await store.identities.get(parsed.id);
    if (row) {
      if (!timingSafeEqual(Buffer.from(secretSha256, 'hex'), Buffer.from(row.secretSha256, 'hex'))) {
        throw new FleetError('conflict', `identity ${parsed.id} is registered on this broker with another secret`, {
          hint: 'Give the broker the token file it was first started with, or make a new one with fleetmesh bootstrap.',
        });
      }
      if (row.revokedAt !== null) return { id: parsed.id, usable: false, replaced: undefined };
      await store.identities.extend(parsed.id, Math.max(expiresAt, row.expiresAt));
      return { id: parsed.id, usable: true, replaced: undefined };
    }
    const holder = await store.identities.findLiveByName(options.name);
    if (holder) await store.identities.revoke(holder.id, now);
    await store.identities.insert({ id: parsed.id, name: options.name, secretSha256, level: options.level, grants: FULL_ACCESS, createdAt: now, expiresAt });
    return { id: parsed.id, usable: true, replaced: holder?.id };
  });
}

/** Why a bearer token was refused, in words for the WWW-Authenticate header. */
export class TokenRefused extends Error {}

/** The identity a bearer token proves, or TokenRefused with the reason. */
export async function verifyBearerToken(store: BrokerStore, token: string, now = Date.now()): Promise<Identity> {
  const parsed = parseIdentityToken(token);
  if (!parsed) throw new TokenRefused('the token is malformed');
  const row = await store.identities.get(parsed.id);
  if (!row || !timingSafeEqual(Buffer.from(hash(parsed.secret), 'hex'), Buffer.from(row.secretSha256, 'hex'))) throw new TokenRefused('the token is not known');
  if (row.revokedAt !== null) throw new TokenRefused('the token was revoked');
  if (row.expiresAt <= now) throw new TokenRefused('the token has expired');
  return identityOf(row);
}

/** The identity of a row, as a request's token proves it. */
function identityOf(row: NonNullable<Awaited<ReturnType<BrokerStore['identities']['get']>>>): Identity {
  return { id: row.id, name: row.name, level: row.level, grants: new GrantSet(row.grants), expiresAt: row.expiresAt };
}

/** The identity `id` while it may still be used (not revoked nor expired), or undefined: for what holds an identity past its token (a console session). */
export async function liveIdentity(store: BrokerStore, id: string, now = Date.now()): Promise<Identity | undefined> {
  const row = await store.identities.get(id);
  return row && row.revokedAt === null && row.expiresAt > now ? identityOf(row) : undefined;
}
