import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { TokenRefused } from '../identities.ts';
import { type AccessTokenClaims, readClaims } from './access-token-claims.ts';
import type { JwksCache } from './jwks-cache.ts';

interface AccessTokenVerifierOptions {
  /** The one issuer whose tokens are taken. */
  issuer: string;
  /** Whether that issuer is the broker's built-in server, whose own claims are then read (access-token-claims.ts). */
  builtin: boolean;
  /** This server's canonical URI (the MCP endpoint's URL): a token's `aud` must name it (RFC 8707). */
  audience: () => string;
  requiredScopes: readonly string[];
  /** How far `exp` and `nbf` may be off, for clocks that differ a little. */
  clockSkewS: number;
  jwks: JwksCache;
}

/**
 * Asymmetric signatures only, with a key from the issuer's JWKS: `none` and
 * the HMAC algorithms are refused before any key is looked at (an HS256 token
 * "signed" with the issuer's public key is the classic confusion).
 */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** jose's refusal of a claim, in words for the challenge. */
function claimRefusal(error: errors.JWTClaimValidationFailed, audience: string): string {
  switch (error.claim) {
    case 'aud':
      return `the token is for another resource, not this server (${audience})`;
    case 'nbf':
      return 'the token is not valid yet';
    case 'iss':
      return 'the token was issued by another issuer';
    default:
      return `the token's ${error.claim} claim is refused: ${error.reason}`;
  }
}

/**
 * Checks OAuth access tokens that are JWTs (RFC 9068) from one issuer:
 * signature by a key of the issuer's JWKS, `iss`, `aud` naming this server,
 * `exp` and `nbf` within the clock skew, and the scopes the broker requires.
 * Every refusal is a TokenRefused saying why, in words.
 */
export class AccessTokenVerifier {
  constructor(private readonly options: AccessTokenVerifierOptions) {}

  get issuer(): string {
    return this.options.issuer;
  }

  async verify(token: string): Promise<AccessTokenClaims> {
    const { options } = this;
    let alg: string | undefined;
    let issuer: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
      issuer = decodeJwt(token).iss;
    } catch {
      throw new TokenRefused('the token is malformed');
    }
    // Read before the signature only to say why in words; the signature is checked all the same.
    if (!alg || !ALGORITHMS.includes(alg)) throw new TokenRefused(`the token's algorithm ${alg ?? 'none'} is not accepted (only ${ALGORITHMS.join(', ')})`);
    if (issuer !== options.issuer)
      throw new TokenRefused(`the token was issued by ${JSON.stringify(issuer ?? null)}, not by ${options.issuer}, which this broker trusts`);
    const audience = options.audience();
    try {
      const { payload } = await jwtVerify(token, options.jwks.key, {
        issuer: options.issuer,
        audience,
        algorithms: ALGORITHMS,
        clockTolerance: options.clockSkewS,
        requiredClaims: ['exp', 'sub'],
      });
      return readClaims(payload, options.requiredScopes, options.builtin);
    } catch (error) {
      if (error instanceof TokenRefused || error instanceof FleetError) throw error;
      if (error instanceof errors.JWTExpired) throw new TokenRefused('the token has expired');
      if (error instanceof errors.JWTClaimValidationFailed) throw new TokenRefused(claimRefusal(error, audience));
      if (error instanceof errors.JWKSNoMatchingKey) throw new TokenRefused('the token was signed with a key its issuer does not publish (any more)');
      if (error instanceof errors.JWSSignatureVerificationFailed) throw new TokenRefused("the token's signature does not verify");
      if (error instanceof errors.JOSEAlgNotAllowed) throw new TokenRefused(`the token's algorithm ${alg} is not accepted`);
      throw new TokenRefused(`the token could not be checked: ${(error as Error).message}`);
    }
  }
}
