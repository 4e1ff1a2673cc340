import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JSONWebKeySet } from 'jose';
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from '../../shared/log/logger.ts';
import { escapeHtml } from '../http/escape-html.ts';
import type { EdgeStep } from '../mcp/http/edge-chain.ts';
import type { Exchange } from '../mcp/http/exchange.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { type Account, findAccount, saveAccount, tokenClaimsOf } from './accounts.ts';
import { BUILTIN_SCOPE } from './oauth-options.ts';
import { publicJwks, type ServerKeys, SIGNING_ALG } from './server-keys.ts';
import { StoreAdapter } from './store-adapter.ts';

/** Where the built-in server is mounted on the MCP listener: its issuer is the MCP origin and this path. */
export const OAUTH_MOUNT = '/oauth';

interface AuthorizationServerOptions {
  store: BrokerStore;
  log: Logger;
  keys: ServerKeys;
  /** The MCP endpoint's origin, where the server is mounted (its issuer is this and /oauth). */
  origin: string;
  /** The MCP endpoint's URL: the one resource tokens are issued for (RFC 8707), and their audience. */
  resource: () => string;
  /** The console page that signs someone in for an interaction. */
  signInUrl: (uid: string) => string;
  accessTokenTtlS: number;
  refreshTokenTtlS: number;
  /** Behind a proxy (--mcp-public-url): X-Forwarded-* tell the scheme and host. */
  proxy: boolean;
  /** How Client ID Metadata Documents are fetched (oidc-provider's own fetch, which refuses private addresses, unless given). */
  fetch?: Configuration['fetch'];
}

/** What the console's sign-in pages show of a pending authorization. */
export interface PendingAuthorization {
  uid: string;
  /** `login`: nobody signed in yet; `consent`: someone did, and the client's access is to be approved. */
  prompt: 'login' | 'consent';
  client: { id: string; name: string | undefined; redirectUri: string | undefined };
  scopes: string[];
  resource: string;
  /** Who is signed in, at consent. */
  account: Account | undefined;
}

/** How long a pending sign-in lasts, and how long a person's sign-in session and grants. */
const INTERACTION_TTL_S = 10 * 60;
const SESSION_TTL_S = 14 * 86_400;
const CODE_TTL_S = 60;

/**
 * The built-in authorization server (`--oauth builtin`), on oidc-provider,
 * mounted at /oauth of the MCP listener so one origin serves the resource and
 * its issuer: the authorization code grant with PKCE (S256 only), clients by
 * dynamic registration or by Client ID Metadata Document, access tokens as
 * short-lived JWTs for the MCP endpoint alone, refresh tokens rotated at each
 * use (one used twice revokes the whole grant). Its keys, clients, grants and
 * tokens live in the broker's store. The console's pages sign people in and
 * take their consent, finishing the interaction through `signedIn` and
 * `consented`.
 */
export class AuthorizationServer {
  readonly provider: Provider;
  private readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;

  constructor(private readonly options: AuthorizationServerOptions) {
    const { store } = options;
    const resourceServer = () => ({
      scope: BUILTIN_SCOPE,
      audience: options.resource(),
      accessTokenTTL: options.accessTokenTtlS,
      accessTokenFormat: 'jwt' as const,
      jwt: { sign: { alg: SIGNING_ALG } },
    });
    this.provider = new Provider(`${options.origin}${OAUTH_MOUNT}`, {
      adapter: (model: string) => new StoreAdapter(model, store.oauth),
      jwks: { keys: options.keys.signing },
      cookies: { keys: options.keys.cookies },
      clients: [],
      clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], id_token_signed_response_alg: SIGNING_ALG },
      responseTypes: ['code'],
      pkce: { required: () => true },
      scopes: ['openid', 'offline_access', BUILTIN_SCOPE],
      claims: { openid: ['sub'], email: ['email'] },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => options.resource(),
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: KoaContextWithOIDC, indicator: string) => {
            if (indicator !== options.resource()) throw new errors.InvalidTarget(`this server issues tokens for ${options.resource()} only`);
            return resourceServer();
          },
        },
      },
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      extraTokenClaims: async (_ctx, token) => {
        const accountId = 'accountId' in token ? token.accountId : undefined;
        const account = accountId ? await findAccount(store.oauth, accountId) : undefined;
        return account ? tokenClaimsOf(account) : undefined;
      },
      findAccount: async (_ctx, sub) => {
        const account = await findAccount(store.oauth, sub);
        if (!account) return undefined;
        return { accountId: sub, claims: () => ({ sub, ...(account.kind === 'upstream' && account.email ? { email: account.email } : {}) }) };
      },
      interactions: { url: (_ctx, interaction) => options.signInUrl(interaction.uid) },
      ttl: {
        AccessToken: options.accessTokenTtlS,
        AuthorizationCode: CODE_TTL_S,
        RefreshToken: options.refreshTokenTtlS,
        Interaction: INTERACTION_TTL_S,
        Session: SESSION_TTL_S,
        Grant: SESSION_TTL_S,
        IdToken: options.accessTokenTtlS,
      },
      renderError: async (ctx, out) => {
        ctx.type = 'html';
        ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed</title></head><body><h1>Sign-in failed</h1>${Object.entries(
          out,
        )
          .map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(String(value))}</p>`)
          .join('')}</body></html>`;
      },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    this.provider.proxy = options.proxy;
    this.provider.on('server_error', (_ctx, error) => options.log.error('authorization server error', { error: error.message }));
    this.handle = this.provider.callback() as (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  }

  get issuer(): string {
    return this.provider.issuer;
  }

  /** The public keys tokens are checked with (what its jwks_uri serves). */
  get publicJwks(): JSONWebKeySet {
    return publicJwks(this.options.keys);
  }

  /**
   * The step of the MCP listener that serves the server: everything under
   * /oauth, and its metadata where clients look for it first (RFC 8414's
   * well-known path with the issuer's path after it, and OpenID's).
   */
  readonly mount: EdgeStep<Exchange> = async (exchange, next) => {
    const { req, res, url } = exchange;
    const path = url.pathname;
    const metadata = path === `/.well-known/oauth-authorization-server${OAUTH_MOUNT}` || path === `/.well-known/openid-configuration${OAUTH_MOUNT}`;
    if (!metadata && path !== OAUTH_MOUNT && !path.startsWith(`${OAUTH_MOUNT}/`)) return next(exchange);
    const original = req.url ?? '/';
    // oidc-provider finds its mount path from originalUrl, as it would behind a router.
    Object.assign(req, { originalUrl: metadata ? `${OAUTH_MOUNT}/.well-known/openid-configuration` : original });
    req.url = metadata ? '/.well-known/openid-configuration' : original.slice(OAUTH_MOUNT.length) || '/';
    await this.handle(req, res);
  };

  /** A pending authorization the console's pages show, or undefined when there is none by that id (or it expired). */
  async pending(uid: string): Promise<PendingAuthorization | undefined> {
    const interaction = await this.provider.Interaction.find(uid);
    if (!interaction) return undefined;
    const clientId = String(interaction.params.client_id ?? '');
    const client = await this.provider.Client.find(clientId).catch(() => undefined);
    const accountId = interaction.session?.accountId;
    return {
      uid,
      prompt: interaction.prompt.name === 'login' || !accountId ? 'login' : 'consent',
      client: {
        id: clientId,
        name: client?.clientName,
        redirectUri: typeof interaction.params.redirect_uri === 'string' ? interaction.params.redirect_uri : undefined,
      },
      scopes: String(interaction.params.scope ?? '')
        .split(' ')
        .filter(Boolean),
      resource: this.options.resource(),
      account: accountId ? await findAccount(this.options.store.oauth, accountId) : undefined,
    };
  }

  /** Someone signed in for the interaction: resolves to where their browser goes on (the server's resume URL). */
  async signedIn(uid: string, account: Account): Promise<string> {
    const interaction = await this.interaction(uid);
    const accountId = await saveAccount(this.options.store.oauth, account);
    interaction.result = { login: { accountId } };
    await interaction.save(INTERACTION_TTL_S);
    return interaction.returnTo;
  }

  /**
   * The signed-in person approved (or declined) the client's access: a grant
   * of what the client asked for on this server's resource, or the client
   * told access_denied. Resolves to where the browser goes on.
   */
  async consented(uid: string, approved: boolean): Promise<string> {
    const interaction = await this.interaction(uid);
    const accountId = interaction.session?.accountId;
    if (!approved || !accountId) {
      interaction.result = { error: 'access_denied', error_description: 'the person declined to let the client in' };
    } else {
      const grant = interaction.grantId
        ? ((await this.provider.Grant.find(interaction.grantId)) ?? new this.provider.Grant({ accountId, clientId: String(interaction.params.client_id) }))
        : new this.provider.Grant({ accountId, clientId: String(interaction.params.client_id) });
      const details = interaction.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
      if (details.missingOIDCScope?.length) grant.addOIDCScope(details.missingOIDCScope.join(' '));
      for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
      interaction.result = { consent: { grantId: await grant.save() } };
    }
    await interaction.save(INTERACTION_TTL_S);
    return interaction.returnTo;
  }

  private async interaction(uid: string) {
    const interaction = await this.provider.Interaction.find(uid);
    if (!interaction) throw new Error('the sign-in expired or is unknown: start again from the client');
    return interaction;
  }
}
