import { createHash } from 'node:crypto';
import { BUILTIN_CLAIMS } from '../auth/oauth/access-token-claims.ts';
import type { OAuthRecordsTable } from '../store/oauth-records-table.ts';

/**
 * Who signed in to the built-in server: an identity, by its token, or a
 * person an upstream provider vouched for. The access tokens issued to their
 * clients carry what the resource server maps them by (access-token-claims.ts).
 */
export type Account =
  | { kind: 'identity'; identityId: string; name: string }
  | { kind: 'upstream'; issuer: string; subject: string; email: string | undefined; groups: string[]; name: string };

const MODEL = 'FleetAccount';

/** The account's id, the `sub` of its tokens: the same at every sign-in, on every broker. */
export function accountIdOf(account: Account): string {
  if (account.kind === 'identity') return `identity-${account.identityId}`;
  return `upstream-${createHash('sha256').update(`${account.issuer}\n${account.subject}`).digest('hex').slice(0, 24)}`;
}

/** Keeps what is known of the account at its latest sign-in; resolves to its id. */
export async function saveAccount(records: OAuthRecordsTable, account: Account): Promise<string> {
  const id = accountIdOf(account);
  await records.upsert(MODEL, id, account, null);
  return id;
}

export async function findAccount(records: OAuthRecordsTable, id: string): Promise<Account | undefined> {
  return (await records.find(MODEL, id, Date.now()))?.payload as Account | undefined;
}

/** What an access token of this account says beyond its `sub`: the identity it signed in as, or the provider and subject that vouched for the person. */
export function tokenClaimsOf(account: Account): Record<string, unknown> {
  if (account.kind === 'identity') return { [BUILTIN_CLAIMS.identity]: account.identityId };
  return {
    [BUILTIN_CLAIMS.idp]: account.issuer,
    [BUILTIN_CLAIMS.idpSubject]: account.subject,
    ...(account.email ? { email: account.email } : {}),
    ...(account.groups.length ? { groups: account.groups } : {}),
  };
}
