import type { JSONWebKeySet } from 'jose';
import type { Logger } from '../../shared/log/logger.ts';
import { fetchJson } from '../auth/oauth/fetch-json.ts';
import { fetchIssuerMetadata } from '../auth/oauth/issuer-metadata.ts';
import { ResourceServer } from '../auth/oauth/resource-server.ts';
import type { RefusalAudit } from '../calls/refusal-audit.ts';
import type { McpHttpServer } from '../mcp/http/mcp-http-server.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { SIGN_IN_PATH, SignInPages } from '../web/sign-in-pages.ts';
import type { WebServer } from '../web/web-server.ts';
import type { AuthorizationServer } from './authorization-server.ts';
import type { OAuthOptions } from './oauth-options.ts';
import { loadServerKeys } from './server-keys.ts';
import { UpstreamSignIn } from './upstream-sign-in.ts';

interface OAuthEdgeDeps {
  options: OAuthOptions;
  store: BrokerStore;
  log: Logger;
  /** The MCP listener, listening: its URL is the resource tokens are for, and its origin the built-in server's. */
  mcp: McpHttpServer;
  /** The web console, listening, whose pages sign people in to the built-in server. */
  web: WebServer | undefined;
  refusals: RefusalAudit;
  /** Behind a proxy (--mcp-public-url given). */
  proxy: boolean;
  bodyTimeoutMs: number;
}

/** How often the built-in server's expired records (codes, tokens, sign-ins) are swept from the store. */
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * OAuth on a listening broker (`--oauth`): the resource server on the MCP
 * edge, and with `builtin` the authorization server mounted beside it and its
 * sign-in pages on the web console. Made once both listen, since the built-in
 * server's issuer is the MCP origin and its pages are the console's.
 */
export class OAuthEdge {
  private pruner: NodeJS.Timeout | undefined;

  private constructor(
    readonly resourceServer: ResourceServer,
    readonly server: AuthorizationServer | undefined,
  ) {}

  static async start(deps: OAuthEdgeDeps): Promise<OAuthEdge | undefined> {
    const { options, store, mcp } = deps;
    if (options.mode === 'off') return undefined;
    const common = {
      audience: () => mcp.url,
      requiredScopes: options.requiredScopes,
      clockSkewS: options.clockSkewS,
      introspection: options.introspection,
    };
    if (options.mode === 'external') {
      const issuer = options.issuer as string;
      const resourceServer = new ResourceServer(
        {
          ...common,
          issuer,
          builtin: false,
          jwks: {
            fetch: async () => (await fetchJson((await fetchIssuerMetadata(issuer)).jwksUri)) as unknown as JSONWebKeySet,
            maxAgeMs: options.jwksMaxAgeMs,
            cooldownMs: options.jwksCooldownMs,
          },
        },
        store,
      );
      mcp.oauth = { resourceServer, mount: undefined };
      return new OAuthEdge(resourceServer, undefined);
    }
    const web = deps.web;
    if (!web) throw new Error('the built-in authorization server needs the web console');
    // Loaded only here: oidc-provider warns at load on a Node.js older than 22 (it runs on 20.18 and later all the same).
    const { AuthorizationServer } = await import('./authorization-server.ts');
    const server = new AuthorizationServer({
      store,
      log: deps.log,
      keys: await loadServerKeys(store.oauth),
      origin: new URL(mcp.url).origin,
      resource: () => mcp.url,
      signInUrl: (uid) => `${web.origin}${SIGN_IN_PATH}${uid}`,
      accessTokenTtlS: options.accessTokenTtlS,
      refreshTokenTtlS: options.refreshTokenTtlS,
      proxy: deps.proxy,
    });
    // Its keys are in this process: nothing to fetch, and nothing to wait for when they change.
    const resourceServer = new ResourceServer(
      { ...common, issuer: server.issuer, builtin: true, jwks: { fetch: async () => server.publicJwks, maxAgeMs: options.jwksMaxAgeMs, cooldownMs: 0 } },
      store,
    );
    mcp.oauth = { resourceServer, mount: server.mount };
    web.signInPages = new SignInPages({
      server,
      upstream: options.upstream && new UpstreamSignIn(options.upstream, store.oauth),
      store,
      refusals: deps.refusals,
      bodyTimeoutMs: deps.bodyTimeoutMs,
    });
    const edge = new OAuthEdge(resourceServer, server);
    edge.pruner = setInterval(() => void store.oauth.prune(Date.now()).catch(() => {}), PRUNE_EVERY_MS);
    edge.pruner.unref();
    return edge;
  }

  get issuer(): string {
    return this.resourceServer.options.issuer;
  }

  stop(): void {
    clearInterval(this.pruner);
  }
}
