import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { JoinTokenRow } from '../store/join-tokens-table.ts';

/** `fm1.<id>.<secret>`: the id finds the row, the secret is checked against its stored hash. */
const TOKEN_PATTERN = /^fm1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{43})$/;

export interface JoinTokenOptions {
  ttlMs: number;
  /** null: reusable until it expires. */
  uses: number | null;
  labels: Record<string, string>;
  now?: number;
}

export interface CreatedJoinToken {
  token: string;
  id: string;
  expiresAt: number;
  usesAllowed: number | null;
  labels: Record<string, string>;
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function createJoinToken(store: BrokerStore, options: JoinTokenOptions): CreatedJoinToken {
  const id = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const now = options.now ?? Date.now();
  const expiresAt = now + options.ttlMs;
  store.tokens.insert({ id, secretSha256: hashSecret(secret), createdAt: now, expiresAt, usesAllowed: options.uses, labels: options.labels });
  return { token: `fm1.${id}.${secret}`, id, expiresAt, usesAllowed: options.uses, labels: options.labels };
}

/** The token id alone, for logs: never log the whole token. */
export function joinTokenId(token: string): string | undefined {
  return TOKEN_PATTERN.exec(token)?.[1];
}

/**
 * Checks a presented token and counts one use. Call inside the enrollment
 * transaction, so a failed enrollment does not spend the use.
 */
export function redeemJoinToken(store: BrokerStore, token: string, now: number): JoinTokenRow {
  const match = TOKEN_PATTERN.exec(token.trim());
  const refuse = (message: string, hint: string) => new FleetError('forbidden', message, { hint, details: { authentication: true } });
  if (!match) throw refuse('the join token is malformed', 'Copy the whole token printed by fleetmesh token create (it starts with fm1.).');
  const [, id = '', secret = ''] = match;
  const row = store.tokens.get(id);
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
  if (row.usesAllowed !== null && row.uses >= row.usesAllowed) {
    throw refuse(
      `join token ${id} has been used ${row.uses === 1 ? 'already' : `${row.uses} times, its limit`}`,
      'Create a new token with fleetmesh token create (--uses N or --reusable for several agents).',
    );
  }
  store.tokens.recordUse(id, now);
  return row;
}
