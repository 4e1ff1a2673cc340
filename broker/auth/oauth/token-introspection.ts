import { createHash } from 'node:crypto';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { TokenRefused } from '../identities.ts';
import { type AccessTokenClaims, readClaims } from './access-token-claims.ts';
import { fetchJson } from './fetch-json.ts';

export interface IntrospectionOptions {
  /** The issuer's introspection endpoint (RFC 7662). */
  url: string;
  /** The broker's client at the issuer, which introspection requires. */
  clientId: string;
  clientSecret: string;
}

interface TokenIntrospectionOptions extends IntrospectionOptions {
  issuer: string;
  audience: () => string;
  requiredScopes: readonly string[];
}

/** How long an answer is believed at most: a token revoked at the issuer is refused within it. */
const ANSWER_LIFETIME_MS = 60_000;
/** Answers remembered at most; past it the memory starts afresh. */
const MAX_ANSWERS = 10_000;

/**
 * Opaque access tokens, checked by asking their issuer (RFC 7662): active,
 * issued by the issuer the broker trusts, for this server when the answer
 * names an audience, not expired, with the scopes required. An answer is kept
 * for a minute at most (never past the token's expiry), by the token's hash.
 */
export class TokenIntrospection {
  private readonly answers = new Map<string, { claims: AccessTokenClaims; untilMs: number }>();

  constructor(private readonly options: TokenIntrospectionOptions) {}

  async claims(token: string): Promise<AccessTokenClaims> {
    const key = createHash('sha256').update(token).digest('hex');
    const now = Date.now();
    const known = this.answers.get(key);
    if (known && known.untilMs > now) return known.claims;
    const claims = await this.ask(token, now);
    if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
    this.answers.set(key, { claims, untilMs: Math.min(now + ANSWER_LIFETIME_MS, claims.expiresAtMs) });
    return claims;
  }

  private async ask(token: string, now: number): Promise<AccessTokenClaims> {
    const { options } = this;
    let answer: Record<string, unknown>;
    try {
      answer = await fetchJson(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      });
    } catch (error) {
      throw new FleetError('unavailable', `the OAuth issuer's introspection endpoint did not answer: ${(error as Error).message}`, {
        hint: 'Check --oauth-introspection-url and the broker client at the issuer; tokens are checked again once it answers.',
      });
    }
    if (answer.active !== true) throw new TokenRefused('the issuer says the token is not active');
    const issuer = answer.iss ?? options.issuer;
    if (issuer !== options.issuer)
      throw new TokenRefused(`the token was issued by ${JSON.stringify(issuer)}, not by ${options.issuer}, which this broker trusts`);
    const audience = options.audience();
    const aud = answer.aud;
    if (aud !== undefined && !(Array.isArray(aud) ? aud.includes(audience) : aud === audience)) {
      throw new TokenRefused(`the token is for another resource, not this server (${audience})`);
    }
    if (typeof answer.exp === 'number' && answer.exp * 1000 <= now) throw new TokenRefused('the token has expired');
    return readClaims({ ...answer, iss: issuer }, options.requiredScopes, false);
  }
}
