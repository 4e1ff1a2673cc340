import { createHash } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { decodeJwt } from 'jose';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { type Identity, parseIdentityToken, TokenRefused } from '../../auth/identities.ts';
import type { RefusalAudit } from '../../calls/refusal-audit.ts';
import type { EdgeStep } from './edge-chain.ts';
import type { Exchange, ProvenExchange } from './exchange.ts';
import { sendJsonRpcError } from './json-answers.ts';
import { protectedResourceMetadataUrl } from './well-known.ts';

interface BearerAuthOptions {
  /** The identity a token proves: TokenRefused with the reason, or a FleetError `unavailable` when the store does not answer. */
  verify(token: string): Promise<Identity>;
  /** Records when an identity was last used (at most once a minute each, whatever the traffic). */
  touch(identityId: string, nowMs: number): Promise<unknown>;
  /** Where refused tokens are audited. */
  refusals: Pick<RefusalAudit, 'record'>;
  /** The endpoint's URL: the challenge names its protected resource metadata. */
  resourceUrl: () => string;
  /** With OAuth on, the scopes its tokens must carry: the challenge names them, for a client to ask for. */
  scopes?: () => readonly string[];
}

/** Bearer tokens remembered for a store outage; past it the memory starts afresh. */
const MAX_PROVEN_TOKENS = 10_000;
/** How often an identity's last use is written: a busy client does not write the store on every request. */
const TOUCH_INTERVAL_MS = 60_000;

/** The next step of a caller refused for its token, whoever runs the broker. */
const NEW_TOKEN_STEP =
  "Use the admin token `npm start` printed (kept in .fleetmesh/admin.token), or make one on the broker's machine: fleetmesh identity create NAME --level 0..3.";

/** What a refused token claims of itself, for the audit (an identity token's id; a JWT's issuer and subject, unverified, as such). */
function claimedBy(token: string): Record<string, unknown> {
  const tokenId = parseIdentityToken(token)?.id;
  if (tokenId) return { token_id: tokenId };
  try {
    const { iss, sub } = decodeJwt(token);
    return { claimed_issuer: iss ?? null, claimed_subject: sub ?? null };
  } catch {
    return {};
  }
}

/**
 * Every /mcp request must carry `Authorization: Bearer <token>`: the identity
 * it proves is handed on (with the SDK's view of it, which never holds the
 * token). Without one, or with one refused (audited, by its id only), the
 * answer is 401 with a challenge naming the protected resource metadata.
 * While the store does not answer, a token it proved before still passes
 * until its identity expires (reads of the fleet go on through an outage);
 * one never proved is answered 503.
 */
export function bearerAuth(options: BearerAuthOptions): EdgeStep<Exchange, ProvenExchange> {
  /** The identity each token last proved, by the token's hash. */
  const proven = new Map<string, Identity>();
  const touched = new Map<string, number>();
  const challenge = (error?: string, description?: string, scope = options.scopes?.().join(' ')) =>
    [
      `Bearer realm="fleetmesh"`,
      `resource_metadata="${protectedResourceMetadataUrl(options.resourceUrl())}"`,
      ...(scope ? [`scope="${scope}"`] : []),
      ...(error ? [`error="${error}"`, `error_description="${description?.replaceAll('"', "'")}"`] : []),
    ].join(', ');

  const prove = async (token: string, source: string): Promise<Identity | { status: number; message: string; challenge?: string }> => {
    const tokenHash = createHash('sha256').update(token).digest('hex');
    try {
      const identity = await options.verify(token);
      const now = Date.now();
      if (now - (touched.get(identity.id) ?? 0) > TOUCH_INTERVAL_MS) {
        touched.set(identity.id, now);
        void options.touch(identity.id, now).catch(() => {});
      }
      if (proven.size >= MAX_PROVEN_TOKENS) proven.clear();
      proven.set(tokenHash, identity);
      return identity;
    } catch (error) {
      const known = proven.get(tokenHash);
      if (error instanceof FleetError && error.code === 'unavailable') {
        if (known && known.expiresAt > Date.now()) return known;
        return { status: 503, message: `Unavailable: ${error.message}. ${error.hint}` };
      }
      proven.delete(tokenHash);
      const reason = error instanceof TokenRefused ? error.message : 'the token could not be checked';
      void options.refusals.record({
        source,
        tool: '/mcp',
        arguments: claimedBy(token),
        errorCode: 'forbidden',
        reason: `bearer token refused: ${reason}`,
      });
      // 403: the token proves someone this broker lets in for nothing (a scope missing, or no mapping rule for them).
      if (error instanceof TokenRefused && error.status === 403) {
        return error.scope
          ? { status: 403, message: `Forbidden: ${reason}.`, challenge: challenge('insufficient_scope', reason, error.scope) }
          : { status: 403, message: `Forbidden: ${reason}. Ask the operator to map you (fleetmesh identity map).` };
      }
      return { status: 401, message: `Unauthorized: ${reason}. ${NEW_TOKEN_STEP}`, challenge: challenge('invalid_token', reason) };
    }
  };

  return async (exchange, next) => {
    const { req, res } = exchange;
    const header = req.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) {
      sendJsonRpcError(res, 401, -32000, `Unauthorized: send Authorization: Bearer <token>. ${NEW_TOKEN_STEP}`, { 'www-authenticate': challenge() });
      return;
    }
    const proof = await prove(match[1] ?? '', req.socket.remoteAddress ?? 'unknown');
    if (!('id' in proof)) {
      sendJsonRpcError(res, proof.status, -32000, proof.message, proof.challenge ? { 'www-authenticate': proof.challenge } : {});
      return;
    }
    const { person } = proof;
    const authInfo: AuthInfo = {
      token: 'redacted',
      clientId: person?.clientId ?? proof.id,
      scopes: [],
      expiresAt: Math.floor(proof.expiresAt / 1000),
      extra: { identity: proof.name, ...(person ? { subject: person.subject, ...(person.email ? { email: person.email } : {}) } : {}) },
    };
    await next({ ...exchange, identity: proof, authInfo });
  };
}
