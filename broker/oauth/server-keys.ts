import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JSONWebKeySet, type JWK } from 'jose';
import type { OAuthRecordsTable } from '../store/oauth-records-table.ts';

/** The built-in server's secrets: the key its tokens are signed with, and the keys its cookies are signed with. */
export interface ServerKeys {
  /** Private JWKs (oidc-provider's `jwks`). */
  signing: JWK[];
  cookies: string[];
}

/** The signing algorithm of the built-in server's tokens. */
export const SIGNING_ALG = 'ES256' as const;

async function newKeys(): Promise<ServerKeys> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { signing: [{ ...jwk, kid, alg: SIGNING_ALG, use: 'sig' }], cookies: [randomBytes(32).toString('base64url')] };
}

/**
 * The server's keys, from the store: made by the first broker that needs
 * them, and the same for every broker of a cluster after that (the first
 * write wins), so tokens and cookies one broker signs, the others check.
 */
export async function loadServerKeys(records: OAuthRecordsTable): Promise<ServerKeys> {
  const made = await newKeys();
  return (await records.insertFirst('ServerKeys', 'current', made as unknown as Record<string, unknown>)) as unknown as ServerKeys;
}

/** The public half of the signing keys, as the server's jwks_uri publishes them. */
export function publicJwks(keys: ServerKeys): JSONWebKeySet {
  return { keys: keys.signing.map(({ d: _d, ...publicPart }) => publicPart) };
}
