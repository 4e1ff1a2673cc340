import type { EdgeStep } from './edge-chain.ts';
import type { Exchange } from './exchange.ts';
import { sendJson } from './json-answers.ts';

const PREFIX = '/.well-known/oauth-protected-resource';

/** The authorization server a broker with OAuth on names, and the scopes its tokens must carry. */
export interface AuthorizationServerRef {
  issuer: string;
  scopes: readonly string[];
}

/** Where the protected resource metadata of the endpoint at `resourceUrl` is served (RFC 9728: the well-known prefix, then its path). */
export function protectedResourceMetadataUrl(resourceUrl: string): string {
  const url = new URL(resourceUrl);
  return `${url.origin}${PREFIX}${url.pathname}`;
}

/**
 * The documents a client reads before it has a token: the protected
 * resource metadata (RFC 9728) of the endpoint at `resourceUrl()`, served
 * without a bearer token at the well-known path and any path under it. With
 * OAuth on it names the one authorization server whose tokens the broker
 * takes, and the scopes to ask it for; without, none: tokens come from the
 * operator.
 */
export function wellKnownDocuments(resourceUrl: () => string, oauth: () => AuthorizationServerRef | undefined = () => undefined): EdgeStep<Exchange> {
  return async (exchange, next) => {
    if (!exchange.url.pathname.startsWith(PREFIX)) return next(exchange);
    const server = oauth();
    sendJson(exchange.res, 200, {
      resource: resourceUrl(),
      authorization_servers: server ? [server.issuer] : [],
      ...(server?.scopes.length ? { scopes_supported: [...server.scopes] } : {}),
      bearer_methods_supported: ['header'],
      resource_name: 'fleetmesh',
      resource_documentation: server
        ? `Sign in through ${server.issuer}, or use a bearer token issued by the operator: fleetmesh identity create NAME --level 0..3`
        : 'Bearer tokens are issued by the operator: fleetmesh identity create NAME --level 0..3',
    });
  };
}
