import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BrokerStore } from '../store/broker-store.ts';
import { createIdentityAs, revokeIdentityAs } from './identity-admin.ts';
import { createJoinTokenAs, revokeJoinTokenAs } from './join-token-admin.ts';

describe('changes of the broker’s own records', () => {
  let dir: string;
  let store: BrokerStore;
  const operator = { name: 'operator:root@shell' };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fm-admin-'));
    store = await BrokerStore.open(dir);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('audit a join token made and revoked, by whoever did it, without its secret', async () => {
    const created = await createJoinTokenAs(store, operator, { ttlMs: 60_000, uses: 1, labels: { env: 'lab' } });
    await revokeJoinTokenAs(store, operator, created.token);
    const rows = await store.audit.recent({ limit: 5 });
    expect(rows.map((row) => [row.tool, row.identity, row.level, row.outcome, row.targets])).toEqual([
      ['token revoke', operator.name, 3, 'ok', [`join-token:${created.id}`]],
      ['token create', operator.name, 3, 'ok', [`join-token:${created.id}`]],
    ]);
    expect(rows[1]?.arguments).toMatchObject({ token_id: created.id, uses_allowed: 1, labels: { env: 'lab' } });
    expect(JSON.stringify(rows)).not.toContain(created.token.split('.')[2]);
  });

  it('refuse to revoke what is not there, and audit nothing then', async () => {
    await expect(revokeJoinTokenAs(store, operator, '0123456789abcdef')).rejects.toMatchObject({ code: 'not_found' });
    await expect(revokeIdentityAs(store, operator, 'nobody')).rejects.toMatchObject({ code: 'not_found' });
    expect(await store.audit.recent({ limit: 5 })).toEqual([]);
  });

  it('audit an identity made and revoked, without its bearer token', async () => {
    const { token, row } = await createIdentityAs(store, operator, { name: 'ci', level: 1, grants: ['host:ci-*'] });
    await revokeIdentityAs(store, operator, 'ci');
    const rows = await store.audit.recent({ limit: 5 });
    expect(rows.map((r) => [r.tool, r.targets])).toEqual([
      ['identity revoke', ['identity:ci']],
      ['identity create', ['identity:ci']],
    ]);
    expect(rows[1]?.arguments).toMatchObject({ name: 'ci', id: row.id, level: 1, grants: ['host:ci-*'] });
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});
