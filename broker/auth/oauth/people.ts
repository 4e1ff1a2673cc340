import { createHash, randomBytes } from 'node:crypto';
import type { BrokerStore } from '../../store/broker-store.ts';
import type { IdentityRow, PersonFacts } from '../../store/identities-table.ts';
import { type Identity, identityOfRow, type Person, TokenRefused } from '../identities.ts';
import type { AccessTokenClaims } from './access-token-claims.ts';
import { firstMatch } from './mapping-rules.ts';

/** A person's row is written again when their token outlives what it says by more than this (not at every request). */
const EXPIRY_SLACK_MS = 60_000;

/** A person's identity id: the same on every broker and at every sign-in, 16 hex digits as a token identity's. */
const personId = (issuer: string, subject: string) => createHash('sha256').update(`${issuer}\n${subject}`).digest('hex').slice(0, 16);

const sameFacts = (row: IdentityRow, facts: PersonFacts) =>
  row.level === facts.level &&
  row.email === facts.email &&
  JSON.stringify(row.grants) === JSON.stringify(facts.grants) &&
  JSON.stringify(row.tools) === JSON.stringify(facts.tools) &&
  row.expiresAt + EXPIRY_SLACK_MS >= facts.expiresAt;

/**
 * People signed in through OAuth, as identities. The operator's mapping
 * rules decide at every request what a person may do (first match wins; no
 * match lets them in for nothing), so removing the rule that maps someone
 * refuses their next request. Each person also has an identity row, written
 * when what the rules say of them changes: sessions, tasks, the audit and the
 * other brokers of a cluster know them by it, and revoking it (`fleetmesh
 * identity revoke`) shuts them out whatever the rules say. Someone who signed
 * in to the built-in server with an identity token is that identity.
 */
export class People {
  constructor(private readonly store: BrokerStore) {}

  async identityOf(claims: AccessTokenClaims, nowMs = Date.now()): Promise<Identity> {
    const person: Person = { issuer: claims.personIssuer, subject: claims.subject, email: claims.email, clientId: claims.clientId };
    if (claims.identityId !== undefined) {
      const row = await this.store.identities.get(claims.identityId);
      if (row?.kind !== 'token' || row.revokedAt !== null || row.expiresAt <= nowMs) {
        throw new TokenRefused('the identity this person signed in with was revoked or has expired');
      }
      return identityOfRow({ ...row, expiresAt: Math.min(row.expiresAt, claims.expiresAtMs) }, person);
    }
    const who = claims.email ?? claims.subject;
    const rule = firstMatch(await this.store.identityRules.list(), claims);
    if (!rule) {
      throw new TokenRefused(
        `${who} signed in, but no mapping rule of this broker lets them in (fleetmesh identity map --issuer ${claims.personIssuer} …)`,
        403,
      );
    }
    const facts: PersonFacts = {
      name: who,
      level: rule.level,
      grants: rule.grants,
      tools: rule.tools,
      email: claims.email ?? null,
      expiresAt: claims.expiresAtMs,
    };
    const row = await this.rowOf(claims, facts, nowMs);
    return identityOfRow({ ...row, ...facts, name: row.name }, person);
  }

  /** The person's row, made on their first request and written again when what it says changed. */
  private async rowOf(claims: AccessTokenClaims, facts: PersonFacts, nowMs: number): Promise<IdentityRow> {
    const { identities } = this.store;
    const found = await identities.findPerson(claims.personIssuer, claims.subject);
    if (found) {
      if (found.revokedAt !== null) throw new TokenRefused(`${found.name} was revoked on this broker`, 403);
      if (!sameFacts(found, facts)) await identities.updatePerson(found.id, { ...facts, name: found.name });
      return found;
    }
    const id = personId(claims.personIssuer, claims.subject);
    // Names are unique among live identities: a person whose email or subject a token identity holds already gets the name with their id.
    const holder = await identities.findLiveByName(facts.name);
    const name = holder && holder.id !== id ? `${facts.name}~${id.slice(0, 6)}` : facts.name;
    const row = {
      id,
      name,
      kind: 'person' as const,
      // No token proves a person: the hash is of bytes nobody was given.
      secretSha256: createHash('sha256').update(randomBytes(32)).digest('hex'),
      level: facts.level,
      grants: facts.grants,
      tools: facts.tools,
      issuer: claims.personIssuer,
      subject: claims.subject,
      email: facts.email,
      createdAt: nowMs,
      expiresAt: facts.expiresAt,
    };
    // Not in a transaction: on PostgreSQL a failed insert would end it, and the row another broker made could not be read.
    try {
      await identities.insert(row);
    } catch (error) {
      // Another broker of the cluster made the row in the meantime.
      const made = await identities.findPerson(claims.personIssuer, claims.subject);
      if (!made) throw error;
      return made;
    }
    return { ...row, lastUsedAt: null, revokedAt: null };
  }
}
