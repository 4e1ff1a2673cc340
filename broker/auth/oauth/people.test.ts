import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import { BrokerStore } from '../../store/broker-store.ts';
import { createIdentity, TokenRefused } from '../identities.ts';
import { readClaims } from './access-token-claims.ts';
import { People } from './people.ts';

const ISSUER = 'https://idp.example';

const claimsOf = (claims: Record<string, unknown>, builtin = false) =>
  readClaims({ iss: ISSUER, sub: 'alice', exp: Math.floor(Date.now() / 1000) + 300, client_id: 'c1', ...claims }, [], builtin);

describe('people signed in through OAuth, mapped by the operator’s rules', () => {
  const temp = makeTempDir();
  let store: BrokerStore;
  let people: People;
  const rule = (id: string, match: Record<string, unknown>, level: 0 | 1 | 2 | 3, grants = ['*:*=write']) =>
    store.identityRules.add({ id, issuer: ISSUER, match, level, grants, tools: { disable: [], enable: [] }, createdAt: Date.now() });

  beforeEach(async () => {
    store = await BrokerStore.open(temp.path);
    people = new People(store);
  });
  afterEach(async () => {
    await store.close();
    temp.remove();
  });

  it('lets nobody in without a rule (403), then the first rule that matches decides', async () => {
    const refused = await people.identityOf(claimsOf({ groups: ['ops'] })).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TokenRefused);
    expect(refused).toMatchObject({ status: 403, message: expect.stringMatching(/no mapping rule of this broker lets them in/) });
    await rule('r-ops', { group: 'ops' }, 2, ['host:web-*=write']);
    await rule('r-all', { email: '*@example.com' }, 0);
    const ops = await people.identityOf(claimsOf({ email: 'alice@example.com', groups: ['ops'] }));
    expect(ops).toMatchObject({
      name: 'alice@example.com',
      level: 2,
      person: { issuer: ISSUER, subject: 'alice', email: 'alice@example.com', clientId: 'c1' },
    });
    expect(ops.grants.texts).toEqual(['host:web-*=write']);
    const other = await people.identityOf(claimsOf({ sub: 'bob', email: 'BOB@Example.com' }));
    expect(other).toMatchObject({ name: 'BOB@Example.com', level: 0 });
    // A rule of another issuer maps nobody of this one.
    await expect(people.identityOf(claimsOf({ sub: 'carol', email: 'carol@elsewhere.example' }))).rejects.toThrow(/no mapping rule/);
  });

  it('applies a changed or removed rule at the very next request, and a revoked person stays out', async () => {
    await rule('r-ops', { group: 'ops' }, 2);
    const before = await people.identityOf(claimsOf({ groups: ['ops'] }));
    await store.identityRules.remove('r-ops');
    await rule('r-read', { subject: 'ali*' }, 0);
    const after = await people.identityOf(claimsOf({ groups: ['ops'] }));
    // The same person, the same identity id, less to do.
    expect(after).toMatchObject({ id: before.id, level: 0 });
    expect((await store.identities.get(before.id))?.level).toBe(0);
    await store.identityRules.remove('r-read');
    await expect(people.identityOf(claimsOf({ groups: ['ops'] }))).rejects.toMatchObject({ status: 403 });
    await rule('r-back', {}, 1);
    await store.identities.revoke(before.id, Date.now());
    await expect(people.identityOf(claimsOf({}))).rejects.toThrow(/was revoked on this broker/);
  });

  it('takes the built-in server’s word for the identity someone signed in as, and no other issuer’s', async () => {
    const { id } = await createIdentity(store, { name: 'ops', level: 3 });
    await expect(people.identityOf(claimsOf({ fm_identity: id }, true))).resolves.toMatchObject({ id, name: 'ops', level: 3, person: { clientId: 'c1' } });
    // From an external provider the claim means nothing: the person is mapped by the rules, and here none.
    await expect(people.identityOf(claimsOf({ fm_identity: id }, false))).rejects.toMatchObject({ status: 403 });
    await store.identities.revoke(id, Date.now());
    await expect(people.identityOf(claimsOf({ fm_identity: id }, true))).rejects.toThrow(/revoked or has expired/);
  });
});
