import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { type EdgeServer, sendTo, serveEdge } from '../../../test/harness/edge-server.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { createIdentity, verifyBearerToken } from '../../auth/identities.ts';
import { RefusalAudit } from '../../calls/refusal-audit.ts';
import { BrokerStore } from '../../store/broker-store.ts';
import { bearerAuth } from './bearer-auth.ts';
import { EdgeChain } from './edge-chain.ts';
import type { Exchange, ProvenExchange } from './exchange.ts';

describe('bearerAuth', () => {
  const temp = makeTempDir();
  let store: BrokerStore;
  let server: EdgeServer;
  let storeDown = false;
  const proven: Pick<ProvenExchange, 'identity' | 'authInfo'>[] = [];
  beforeAll(async () => {
    store = await BrokerStore.open(temp.path);
    server = await serveEdge(
      EdgeChain.start<Exchange>()
        .use(
          bearerAuth({
            verify: (token) => (storeDown ? Promise.reject(new FleetError('unavailable', 'the store did not answer')) : verifyBearerToken(store, token)),
            touch: (identityId, nowMs) => store.identities.touch(identityId, nowMs),
            refusals: new RefusalAudit(store, { burst: 100, perMinute: 100 }),
            resourceUrl: () => 'https://fleet.example/mcp',
          }),
        )
        .end(async ({ identity, authInfo }) => {
          proven.push({ identity, authInfo });
        }),
    );
  });
  afterAll(async () => {
    await server.close();
    await store.close();
    temp.remove();
  });

  const post = (headers: Record<string, string>) => sendTo(new URL('/mcp', server.url), { method: 'POST', headers });

  it('hands on the identity a token proves, never the token, and records its use', async () => {
    const { token, id } = await createIdentity(store, { name: 'ops', level: 2 });
    expect((await post({ authorization: `Bearer ${token}` })).status).toBe(418);
    expect(proven.at(-1)).toMatchObject({
      identity: { id, name: 'ops', level: 2 },
      authInfo: { token: 'redacted', clientId: id, scopes: [], extra: { identity: 'ops' } },
    });
    await expect.poll(async () => (await store.identities.get(id))?.lastUsedAt).toBeTypeOf('number');
  });

  it('answers 401 with a challenge naming the metadata, and where a token comes from, to a request without one', async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe(
      'Bearer realm="fleetmesh", resource_metadata="https://fleet.example/.well-known/oauth-protected-resource/mcp"',
    );
    expect(none.json()).toMatchObject({
      error: { code: -32000, message: expect.stringMatching(/^Unauthorized: send Authorization: Bearer <token>\. .*npm start/) },
    });
    expect((await post({ authorization: 'Basic dXNlcjpwYXNz' })).status).toBe(401);
  });

  it('answers 401 invalid_token to a token refused, and audits it by its id alone', async () => {
    const forged = `fmc1.00000000000000aa.${'x'.repeat(43)}`;
    const refused = await post({ authorization: `Bearer ${forged}` });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token", error_description="the token is not known"$/);
    expect(refused.json()).toMatchObject({ error: { message: expect.stringMatching(/^Unauthorized: the token is not known\. .*fleetmesh identity create/) } });
    await expect
      .poll(async () => (await store.audit.recent({ limit: 10, refused: true })).map((row) => [row.tool, row.arguments, row.reason]))
      .toContainEqual(['/mcp', { token_id: '00000000000000aa' }, 'bearer token refused: the token is not known']);
  });

  it('lets a token it proved through a store outage, and answers 503 to one it never proved', async () => {
    const { token } = await createIdentity(store, { name: 'through-outage', level: 0 });
    const { token: stranger } = await createIdentity(store, { name: 'stranger', level: 0 });
    expect((await post({ authorization: `Bearer ${token}` })).status).toBe(418);
    storeDown = true;
    try {
      expect((await post({ authorization: `Bearer ${token}` })).status).toBe(418);
      const unknown = await post({ authorization: `Bearer ${stranger}` });
      expect(unknown.status).toBe(503);
      expect(unknown.json()).toMatchObject({ error: { message: expect.stringMatching(/^Unavailable: the store did not answer\./) } });
    } finally {
      storeDown = false;
    }
  });
});
