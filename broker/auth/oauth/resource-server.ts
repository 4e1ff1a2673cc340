import type { JSONWebKeySet } from 'jose';
import type { BrokerStore } from '../../store/broker-store.ts';
import { type Identity, TokenRefused } from '../identities.ts';
import { AccessTokenVerifier } from './access-token-verifier.ts';
import { JwksCache } from './jwks-cache.ts';
import { People } from './people.ts';
import { type IntrospectionOptions, TokenIntrospection } from './token-introspection.ts';

export interface ResourceServerOptions {
  /** The one issuer whose access tokens the broker takes. */
  issuer: string;
  /** Whether it is the broker's built-in authorization server. */
  builtin: boolean;
  /** This server's canonical URI (the MCP endpoint's URL), the audience tokens must name. */
  audience: () => string;
  /** Scopes every token must carry. */
  requiredScopes: readonly string[];
  clockSkewS: number;
  /** Where the issuer's keys come from, and how long they are believed (jwks-cache.ts). */
  jwks: { fetch(): Promise<JSONWebKeySet>; maxAgeMs: number; cooldownMs: number };
  /** Opaque tokens are asked about here, when set; otherwise only JWTs are taken. */
  introspection: IntrospectionOptions | undefined;
}

/** A JWT's shape: three base64url parts (a JWE's five are not taken). */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * The broker as an OAuth resource server (the MCP authorization spec, for
 * both protocol eras): an access token from the issuer it trusts becomes the
 * identity of the person it names, as the operator's mapping rules say. JWTs
 * are checked here with the issuer's keys; other tokens are asked about at
 * the issuer's introspection endpoint when the operator configured one.
 */
export class ResourceServer {
  private readonly jwt: AccessTokenVerifier;
  private readonly introspection: TokenIntrospection | undefined;
  private readonly people: People;

  constructor(
    readonly options: ResourceServerOptions,
    store: BrokerStore,
  ) {
    this.jwt = new AccessTokenVerifier({
      issuer: options.issuer,
      builtin: options.builtin,
      audience: options.audience,
      requiredScopes: options.requiredScopes,
      clockSkewS: options.clockSkewS,
      jwks: new JwksCache(options.jwks),
    });
    this.introspection =
      options.introspection &&
      new TokenIntrospection({ ...options.introspection, issuer: options.issuer, audience: options.audience, requiredScopes: options.requiredScopes });
    this.people = new People(store);
  }

  /** The identity an access token proves: TokenRefused saying why not, or a FleetError `unavailable` when the issuer or store does not answer. */
  async identityOf(token: string): Promise<Identity> {
    if (JWT_SHAPE.test(token)) return this.people.identityOf(await this.jwt.verify(token));
    if (this.introspection) return this.people.identityOf(await this.introspection.claims(token));
    throw new TokenRefused('the token is neither an identity token nor an access token (JWT) of the issuer this broker trusts');
  }
}
