import { createPublicKey, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TokenRefused } from '../identities.ts';
import { AccessTokenVerifier } from './access-token-verifier.ts';
import { fetchJson } from './fetch-json.ts';
import { JwksCache } from './jwks-cache.ts';

const ISSUER = 'https://idp.example';
const AUDIENCE = 'http://127.0.0.1:7400/mcp';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey | KeyObject;
  publicJwk: JWK;
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** An access token as an issuer signs it; `claims` overrides the defaults. */
function token(key: SigningKey, claims: Record<string, unknown> = {}, alg = 'RS256'): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', scope: 'fleet', client_id: 'c1', iat: now, exp: now + 300, ...claims })
    .setProtectedHeader({ alg, kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
}

describe('access tokens checked against the issuer, with its keys served over HTTP', () => {
  let server: Server;
  let published: JWK[] = [];
  let fetches = 0;
  let first: SigningKey;
  let second: SigningKey;
  let verifier: AccessTokenVerifier;

  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TokenRefused);
    return error as TokenRefused;
  };

  beforeAll(async () => {
    first = await signingKey('key-1');
    second = await signingKey('key-2');
    server = createServer((_req, res) => {
      fetches += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    published = [first.publicJwk];
    fetches = 0;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
    verifier = new AccessTokenVerifier({
      issuer: ISSUER,
      builtin: false,
      audience: () => AUDIENCE,
      requiredScopes: ['fleet'],
      clockSkewS: 30,
      jwks: new JwksCache({ fetch: async () => (await fetchJson(url)) as never, maxAgeMs: 600_000, cooldownMs: 0 }),
    });
  });

  it('takes a token of the issuer for this server, and reads who and which client it is for', async () => {
    await expect(verifier.verify(await token(first, { email: 'alice@example.com', groups: ['ops'] }))).resolves.toMatchObject({
      issuer: ISSUER,
      personIssuer: ISSUER,
      subject: 'alice',
      email: 'alice@example.com',
      groups: ['ops'],
      scopes: ['fleet'],
      clientId: 'c1',
    });
  });

  it('refuses a token for another audience', async () => {
    const refused = await refusal(verifier.verify(await token(first, { aud: 'https://other.example/mcp' })));
    expect(refused.message).toBe(`the token is for another resource, not this server (${AUDIENCE})`);
  });

  it('refuses a token of another issuer, before any of its keys are fetched', async () => {
    const refused = await refusal(verifier.verify(await token(first, { iss: 'https://evil.example' })));
    expect(refused.message).toMatch(/issued by "https:\/\/evil.example", not by https:\/\/idp.example/);
    expect(fetches).toBe(0);
  });

  it('refuses an expired token, past the clock skew only', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await refusal(verifier.verify(await token(first, { exp: now - 120 })))).message).toBe('the token has expired');
    await expect(verifier.verify(await token(first, { exp: now - 10 }))).resolves.toMatchObject({ subject: 'alice' });
    expect((await refusal(verifier.verify(await token(first, { nbf: now + 120 })))).message).toBe('the token is not valid yet');
  });

  it('refuses an unsigned token (alg none)', async () => {
    const unsigned = new UnsecuredJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', scope: 'fleet', exp: Math.floor(Date.now() / 1000) + 300 }).encode();
    expect((await refusal(verifier.verify(unsigned))).message).toMatch(/algorithm none is not accepted/);
  });

  it("refuses an HS256 token signed with the issuer's public key as the HMAC secret", async () => {
    const publicPem = await exportSPKI(createPublicKey({ key: first.publicJwk as never, format: 'jwk' }));
    const forged = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'admin', scope: 'fleet', exp: Math.floor(Date.now() / 1000) + 300 })
      .setProtectedHeader({ alg: 'HS256', kid: first.kid })
      .sign(new TextEncoder().encode(publicPem));
    expect((await refusal(verifier.verify(forged))).message).toMatch(/algorithm HS256 is not accepted/);
  });

  it('refuses a token signed with a key the issuer removed, once a token of its new key made the broker fetch the keys again', async () => {
    const old = await token(first);
    await expect(verifier.verify(old)).resolves.toMatchObject({ subject: 'alice' });
    published = [second.publicJwk];
    await expect(verifier.verify(await token(second))).resolves.toMatchObject({ subject: 'alice' });
    expect((await refusal(verifier.verify(old))).message).toMatch(/signed with a key its issuer does not publish/);
  });

  it('refuses a token whose signature does not verify', async () => {
    const [header, payload] = (await token(first)).split('.');
    const other = (await token(second, {}, 'RS256')).split('.')[2];
    expect((await refusal(verifier.verify(`${header}.${payload}.${other}`))).message).toMatch(/signature does not verify/);
  });

  it('refuses a token without the scope the broker requires with 403, naming it', async () => {
    const refused = await refusal(verifier.verify(await token(first, { scope: 'profile' })));
    expect(refused).toMatchObject({ status: 403, scope: 'fleet', message: 'the token lacks the scope fleet' });
  });

  it('fetches the keys again for an unknown key id at most once per cooldown, however many tokens name one', async () => {
    const bounded = new AccessTokenVerifier({
      issuer: ISSUER,
      builtin: false,
      audience: () => AUDIENCE,
      requiredScopes: [],
      clockSkewS: 30,
      jwks: new JwksCache({
        fetch: async () => (await fetchJson(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`)) as never,
        maxAgeMs: 600_000,
        cooldownMs: 60_000,
      }),
    });
    await bounded.verify(await token(first));
    const strangers = await Promise.all(Array.from({ length: 20 }, async (_, i) => token({ ...second, kid: `made-up-${i}` })));
    for (const stranger of strangers) await refusal(bounded.verify(stranger));
    expect(fetches).toBe(1);
  });
});
