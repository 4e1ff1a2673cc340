import { createHash, randomBytes } from 'node:crypto';
import { jwtVerify } from 'jose';
import { fetchJson } from '../auth/oauth/fetch-json.ts';
import { fetchIssuerMetadata, type IssuerMetadata } from '../auth/oauth/issuer-metadata.ts';
import { JwksCache } from '../auth/oauth/jwks-cache.ts';
import type { OAuthRecordsTable } from '../store/oauth-records-table.ts';
import type { Account } from './accounts.ts';
import type { UpstreamOptions } from './oauth-options.ts';

/** What a sign-in through the provider remembers between leaving and coming back, by its state. */
interface PendingUpstream {
  uid: string;
  verifier: string;
  nonce: string;
}

const MODEL = 'UpstreamSignIn';
/** How long someone may take at the provider. */
const PENDING_TTL_MS = 10 * 60_000;

const random = () => randomBytes(32).toString('base64url');

/**
 * Signing people in to the built-in server through an OpenID provider the
 * operator configured (`--oauth-upstream`): the authorization code flow with
 * PKCE and a nonce, from the console's sign-in page to the provider and back
 * to the console's callback, whose ID token (checked with the provider's
 * keys: issuer, audience, expiry, nonce) says who the person is. What the
 * flow remembers meanwhile is in the store, so the callback may reach any
 * broker of a cluster.
 */
export class UpstreamSignIn {
  private metadata: IssuerMetadata | undefined;
  private readonly jwks: JwksCache;

  constructor(
    private readonly options: UpstreamOptions,
    private readonly records: OAuthRecordsTable,
  ) {
    this.jwks = new JwksCache({
      fetch: async () => (await fetchJson((await this.meta()).jwksUri)) as never,
      maxAgeMs: 10 * 60_000,
      cooldownMs: 30_000,
    });
  }

  /** The provider, as the sign-in page names it. */
  get name(): string {
    return new URL(this.options.issuer).host;
  }

  /** Where the browser goes to sign in at the provider for this interaction; `callback` is the console's URL it comes back to. */
  async start(uid: string, callback: string): Promise<string> {
    const meta = await this.meta();
    if (!meta.authorizationEndpoint) throw new Error(`${this.options.issuer} names no authorization endpoint`);
    const state = random();
    const pending: PendingUpstream = { uid, verifier: random(), nonce: random() };
    await this.records.upsert(MODEL, state, { ...pending }, Date.now() + PENDING_TTL_MS);
    const url = new URL(meta.authorizationEndpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.options.clientId,
      redirect_uri: callback,
      scope: this.options.scopes.join(' '),
      state,
      nonce: pending.nonce,
      code_challenge: createHash('sha256').update(pending.verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return url.href;
  }

  /** The person the provider signed in, from its answer at the callback (whose URL must be the one `start` gave). */
  async finish(query: URLSearchParams, callback: string): Promise<{ uid: string; account: Account }> {
    const state = query.get('state') ?? '';
    const record = state ? await this.records.find(MODEL, state, Date.now()) : undefined;
    if (!record) throw new Error('the sign-in at the provider expired or is unknown: start again from the client');
    await this.records.destroy(MODEL, state);
    const pending = record.payload as unknown as PendingUpstream;
    const refused = query.get('error');
    if (refused) throw new Error(`the provider refused the sign-in: ${refused} ${query.get('error_description') ?? ''}`.trim());
    const meta = await this.meta();
    if (!meta.tokenEndpoint) throw new Error(`${this.options.issuer} names no token endpoint`);
    const { clientId, clientSecret } = this.options;
    const tokens = await fetchJson(meta.tokenEndpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        ...(clientSecret
          ? { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}` }
          : {}),
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.get('code') ?? '',
        redirect_uri: callback,
        code_verifier: pending.verifier,
        ...(clientSecret ? {} : { client_id: clientId }),
      }).toString(),
    });
    if (typeof tokens.id_token !== 'string') throw new Error('the provider answered no ID token (is openid among --oauth-upstream-scopes?)');
    const { payload } = await jwtVerify(tokens.id_token, this.jwks.key, { issuer: this.options.issuer, audience: clientId, clockTolerance: 30 });
    if (payload.nonce !== pending.nonce) throw new Error("the provider's ID token is not for this sign-in (nonce)");
    if (typeof payload.sub !== 'string') throw new Error("the provider's ID token names no subject");
    const email = typeof payload.email === 'string' && payload.email_verified !== false ? payload.email : undefined;
    const groups = Array.isArray(payload.groups) ? payload.groups.filter((group): group is string => typeof group === 'string') : [];
    return {
      uid: pending.uid,
      account: { kind: 'upstream', issuer: this.options.issuer, subject: payload.sub, email, groups, name: email ?? payload.sub },
    };
  }

  private async meta(): Promise<IssuerMetadata> {
    this.metadata ??= await fetchIssuerMetadata(this.options.issuer);
    return this.metadata;
  }
}
