import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { AgentRole } from '../store/agent-roles-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { JoinTokenRow } from '../store/join-tokens-table.ts';

/** `fm1.<id>.<secret>`: the id finds the row, the secret is checked against its stored hash. */
const TOKEN_PATTERN = /^fm1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;

export interface JoinTokenOptions {
  ttlMs: number;
  /** null: reusable until it expires. */
  uses: number | null;
  labels: Record<string, string>;
  /** Roles over shared objects the enrolled agents hold without further approval (docs/claims.md). */
  roles?: AgentRole[];
  now?: number;
}

interface CreatedJoinToken {
  token: string;
  id: string;
  expiresAt: number;
  usesAllowed: number | null;
  labels: Record<string, string>;
  roles: AgentRole[];
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A fresh token string, not registered anywhere yet (`fleetmesh bootstrap` writes it to a file). */
export function newJoinToken(): string {
  return `fm1.${randomBytes(8).toString('hex')}.${randomBytes(32).toString('base64url')}`;
}

/** The id and secret of a well-formed token, or undefined. */
export function parseJoinToken(token: string): { id: string; secret: string } | undefined {
  const match = TOKEN_PATTERN.exec(token.trim());
  return match ? { id: match[1] ?? '', secret: match[2] ?? '' } : undefined;
}

export async function createJoinToken(store: BrokerStore, options: JoinTokenOptions): Promise<CreatedJoinToken> {
  const token = newJoinToken();
  const { id, secret } = parseJoinToken(token) as { id: string; secret: string };
  const now = options.now ?? Date.now();
  const expiresAt = now + options.ttlMs;
  const roles = options.roles ?? [];
  await store.tokens.insert({ id, secretSha256: hashSecret(secret), createdAt: now, expiresAt, usesAllowed: options.uses, labels: options.labels, roles });
  return { token, id, expiresAt, usesAllowed: options.uses, labels: options.labels, roles };
}

/**
 * Registers a reusable token the operator supplies (`--join-token-file`), or
 * renews its expiry when it is registered already. A revoked token stays
 * revoked: restarting the broker does not undo `fleetmesh token revoke`.
 * Returns the token id and whether the token can be used.
 */
export function ensureJoinToken(store: BrokerStore, token: string, options: { ttlMs: number; now?: number }): Promise<{ id: string; usable: boolean }> {
  const parsed = parseJoinToken(token);
  if (!parsed) throw new FleetError('invalid_argument', 'the join token is malformed', { hint: 'A join token looks like fm1.<16 hex>.<43 characters>.' });
  const now = options.now ?? Date.now();
  const expiresAt = now + options.ttlMs;
  const secretSha256 = hashSecret(parsed.secret);
  // One transaction: brokers of a cluster starting together register the token once.
  return store.transaction(async () => {
    const row = await store.tokens.get(parsed.id);
    if (!row) {
      await store.tokens.insert({ id: parsed.id, secretSha256, createdAt: now, expiresAt, usesAllowed: null, labels: {}, roles: [] });
      return { id: parsed.id, usable: true };
    }
    if (!timingSafeEqual(Buffer.from(secretSha256, 'hex'), Buffer.from(row.secretSha256, 'hex'))) {
      throw new FleetError('conflict', `join token ${parsed.id} is registered on this broker with another secret`, {
        hint: 'Give the broker the token file it was first started with, or make a new one with fleetmesh bootstrap.',
      });
    }
    if (row.revokedAt !== null) return { id: parsed.id, usable: false };
    await store.tokens.extend(parsed.id, Math.max(expiresAt, row.expiresAt));
    return { id: parsed.id, usable: true };
  });
}

/** The token id alone, for logs: never log the whole token. */
export function joinTokenId(token: string): string | undefined {
  return parseJoinToken(token)?.id;
}

/**
 * Checks a presented token and counts one use (unless `countUse` is false: an
 * enrollment asked again whose use was counted the first time). Call inside the
 * enrollment transaction, so a failed enrollment does not spend the use.
 */
export async function redeemJoinToken(store: BrokerStore, token: string, now: number, { countUse = true } = {}): Promise<JoinTokenRow> {
  const parsed = parseJoinToken(token);
  const refuse = (message: string, hint: string) => new FleetError('forbidden', message, { hint, details: { authentication: true } });
  if (!parsed) throw refuse('the join token is malformed', 'Copy the whole token printed by fleetmesh token create (it starts with fm1.).');
  const { id, secret } = parsed;
  const row = await store.tokens.get(id);
  const presented = Buffer.from(hashSecret(secret), 'hex');
  if (!row || !timingSafeEqual(presented, Buffer.from(row.secretSha256, 'hex'))) {
    throw refuse('the join token is not known to this broker', 'Create a token on this broker with fleetmesh token create.');
  }
  if (row.revokedAt !== null) throw refuse(`join token ${id} was revoked`, 'Create a new token with fleetmesh token create.');
  if (row.expiresAt <= now) {
    throw refuse(
      `join token ${id} expired at ${new Date(row.expiresAt).toISOString()}`,
      'Create a new token with fleetmesh token create (--ttl sets its lifetime).',
    );
  }
  if (!countUse) return row;
  if (row.usesAllowed !== null && row.uses >= row.usesAllowed) {
    throw refuse(
      `join token ${id} has been used ${row.uses === 1 ? 'already' : `${row.uses} times, its limit`}`,
      'Create a new token with fleetmesh token create (--uses N or --reusable for several agents).',
    );
  }
  await store.tokens.recordUse(id, now);
  return row;
}
