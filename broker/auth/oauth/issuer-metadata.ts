import { fetchJson } from './fetch-json.ts';

/** What the broker reads of an authorization server's metadata. */
export interface IssuerMetadata {
  issuer: string;
  jwksUri: string;
  authorizationEndpoint: string | undefined;
  tokenEndpoint: string | undefined;
  introspectionEndpoint: string | undefined;
}

/** Where an issuer's metadata may be: OpenID discovery (under its path), then RFC 8414 (the path after the well-known prefix). */
function candidates(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  return [`${url.origin}${path}/.well-known/openid-configuration`, `${url.origin}/.well-known/oauth-authorization-server${path}`];
}

/**
 * An issuer's metadata, read from the first well-known document that
 * answers; its `issuer` must be the one asked for exactly (RFC 8414 §3.3), or
 * a document could make the broker trust keys of another.
 */
export async function fetchIssuerMetadata(issuer: string): Promise<IssuerMetadata> {
  const failures: string[] = [];
  for (const url of candidates(issuer)) {
    let document: Record<string, unknown>;
    try {
      document = await fetchJson(url, { headers: { accept: 'application/json' } });
    } catch (error) {
      failures.push((error as Error).message);
      continue;
    }
    if (document.issuer !== issuer) throw new Error(`${url} names the issuer ${JSON.stringify(document.issuer)}, not ${issuer}`);
    if (typeof document.jwks_uri !== 'string') throw new Error(`${url} names no jwks_uri`);
    const text = (key: string) => (typeof document[key] === 'string' ? (document[key] as string) : undefined);
    return {
      issuer,
      jwksUri: document.jwks_uri,
      authorizationEndpoint: text('authorization_endpoint'),
      tokenEndpoint: text('token_endpoint'),
      introspectionEndpoint: text('introspection_endpoint'),
    };
  }
  throw new Error(`no metadata for ${issuer}: ${failures.join('; ')}`);
}
