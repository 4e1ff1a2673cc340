import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Level } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { IdentityRow } from '../store/identities-table.ts';
import { FULL_ACCESS, GrantSet, parseGrant } from './grants.ts';
import { ToolFilter, type ToolGlobs } from './tool-filter.ts';

/** `fmc1.<id>.<secret>`: an MCP client's bearer token. */
const TOKEN_PATTERN = /^fmc1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;
export const DEFAULT_IDENTITY_TTL_MS = 90 * 86_400_000;

/** Who signed in through OAuth, and with which client: what the audit names beside the identity. */
export interface Person {
  /** The issuer that knows the person (an upstream provider's, when the built-in server signed them in through it). */
  issuer: string;
  subject: string;
  email: string | undefined;
  /** The OAuth client the access token was issued to. */
  clientId: string | undefined;
}

/** Who is calling: an identity as the MCP edge sees it, whichever kind of bearer proved it. */
export interface Identity {
  id: string;
  name: string;
  level: Level;
  grants: GrantSet;
  expiresAt: number;
  /** Tools switched off for this identity alone (the broker's own filter applies to everyone); none when absent. */
  tools?: ToolFilter;
  /** Present when an OAuth access token proved the identity: the person and client behind it. */
  person?: Person;
}

/** What the audit names of an identity beyond its name: the person and their client, for one OAuth proved. */
export function auditPeopleOf(identity: Identity): { subject?: string; email?: string; clientId?: string } {
  const { person } = identity;
  if (!person) return {};
  return { subject: person.subject, ...(person.email ? { email: person.email } : {}), ...(person.clientId ? { clientId: person.clientId } : {}) };
}

/** The identity a store row describes. */
export function identityOfRow(row: IdentityRow, person?: Person): Identity {
  return {
    id: row.id,
    name: row.name,
    level: row.level,
    grants: new GrantSet(row.grants),
    expiresAt: row.expiresAt,
    ...(row.tools.disable.length || row.tools.enable.length ? { tools: new ToolFilter(row.tools) } : {}),
    ...(person ? { person } : {}),
  };
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
  options: { name: string; level: Level; grants?: string[]; tools?: ToolGlobs; ttlMs?: number; now?: number },
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
  await store.identities.insert({
    id,
    name: options.name,
    secretSha256: hash(secret),
    level: options.level,
    grants,
    ...(options.tools ? { tools: options.tools } : {}),
    createdAt: now,
    expiresAt,
  });
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

/**
 * Why a bearer token was refused, in words for the WWW-Authenticate header.
 * `status` 401: the token proves nobody (get another one); 403: it proves
 * someone this broker lets in for nothing (no rule maps them, or a scope it
 * requires is missing, named by `scope`).
 */
export class TokenRefused extends Error {
  constructor(
    message: string,
    readonly status: 401 | 403 = 401,
    readonly scope?: string,
  ) {
    super(message);
  }
}

/** The identity a bearer token proves, or TokenRefused with the reason. */
export async function verifyBearerToken(store: BrokerStore, token: string, now = Date.now()): Promise<Identity> {
  const parsed = parseIdentityToken(token);
  if (!parsed) throw new TokenRefused('the token is malformed');
  const row = await store.identities.get(parsed.id);
  // A person's row has no token: its secret hash is of random bytes nobody was given.
  if (row?.kind !== 'token' || !timingSafeEqual(Buffer.from(hash(parsed.secret), 'hex'), Buffer.from(row.secretSha256, 'hex'))) {
    throw new TokenRefused('the token is not known');
  }
  if (row.revokedAt !== null) throw new TokenRefused('the token was revoked');
  if (row.expiresAt <= now) throw new TokenRefused('the token has expired');
  return identityOfRow(row);
}

/** The identity `id` while it may still be used (not revoked nor expired), or undefined: for what holds an identity past its token (a console session). */
export async function liveIdentity(store: BrokerStore, id: string, now = Date.now()): Promise<Identity | undefined> {
  const row = await store.identities.get(id);
  return row && row.revokedAt === null && row.expiresAt > now ? identityOfRow(row) : undefined;
}
