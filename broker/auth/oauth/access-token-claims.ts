import type { JWTPayload } from 'jose';
import { TokenRefused } from '../identities.ts';

/** What an access token says of its holder, once its issuer's signature (or introspection) vouched for it. */
export interface AccessTokenClaims {
  /** The token's issuer. */
  issuer: string;
  /** The issuer that knows the person: the token's, or, for the built-in server signing people in through an upstream provider, that provider's (`idp`). */
  personIssuer: string;
  /** The person's subject at `personIssuer`. */
  subject: string;
  email: string | undefined;
  groups: string[];
  scopes: string[];
  clientId: string | undefined;
  expiresAtMs: number;
  /** The built-in server's token of someone who signed in with an identity token: that identity's id. */
  identityId: string | undefined;
  /** Every claim, for mapping rules that match on others. */
  all: Record<string, unknown>;
}

/** Claims the built-in authorization server adds to its access tokens (see `extraTokenClaims` in authorization-server.ts). */
export const BUILTIN_CLAIMS = {
  /** The upstream provider that signed the person in. */
  idp: 'idp',
  /** Their subject there. */
  idpSubject: 'idp_sub',
  /** The identity whose token they signed in with. */
  identity: 'fm_identity',
} as const;

const stringOf = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

function listOf(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * The claims of a verified token as the broker reads them: scopes from
 * `scope` (RFC 9068) or `scp`, the client from `client_id` or `azp`, groups
 * from `groups`; every scope in `requiredScopes` must be there, or the token
 * is refused with 403 naming them. The built-in server's own claims (who
 * signed in through which provider, or with which identity token) are read
 * only from its tokens (`builtin`): another issuer saying them would be
 * claiming people it does not know.
 */
export function readClaims(payload: JWTPayload, requiredScopes: readonly string[], builtin: boolean): AccessTokenClaims {
  const issuer = stringOf(payload.iss);
  const subject = stringOf(payload.sub);
  if (!issuer || !subject) throw new TokenRefused('the token names no issuer or subject');
  if (typeof payload.exp !== 'number') throw new TokenRefused('the token has no expiry');
  const scopes = listOf(payload.scope ?? payload.scp);
  const missing = requiredScopes.filter((scope) => !scopes.includes(scope));
  if (missing.length) throw new TokenRefused(`the token lacks the scope ${missing.join(' ')}`, 403, requiredScopes.join(' '));
  const idp = builtin ? stringOf(payload[BUILTIN_CLAIMS.idp]) : undefined;
  return {
    issuer,
    personIssuer: idp ?? issuer,
    subject: (idp && stringOf(payload[BUILTIN_CLAIMS.idpSubject])) || subject,
    email: stringOf(payload.email),
    groups: listOf(payload.groups),
    scopes,
    clientId: stringOf(payload.client_id) ?? stringOf(payload.azp),
    expiresAtMs: payload.exp * 1000,
    identityId: builtin ? stringOf(payload[BUILTIN_CLAIMS.identity]) : undefined,
    all: payload,
  };
}
