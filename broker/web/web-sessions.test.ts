import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshDatabase } from '../../test/harness/postgres-server.ts';
import { createIdentity, type Identity, verifyBearerToken } from '../auth/identities.ts';
import { BrokerStore } from '../store/broker-store.ts';
import { MAX_SESSIONS_PER_IDENTITY, type WebSession, WebSessions } from './web-sessions.ts';

const ORIGIN = 'http://127.0.0.1:7401';

/** What a test compares of a session: its identity by id, and the rest. */
function seen(session: WebSession | undefined) {
  return session && { identity: session.identity.id, csrfToken: session.csrfToken, expiresAtMs: session.expiresAtMs, origin: session.origin };
}

describe('console sessions', () => {
  let dir: string;
  let store: BrokerStore;
  let admin: Identity;
  let reader: Identity;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fm-web-sessions-'));
    store = await BrokerStore.open(dir);
    admin = await verifyBearerToken(store, (await createIdentity(store, { name: 'admin', level: 3 })).token);
    reader = await verifyBearerToken(store, (await createIdentity(store, { name: 'reader', level: 0 })).token);
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets one identity signing in over and over end only its own oldest sessions, never another identity’s', async () => {
    const sessions = new WebSessions(store);
    const adminSession = await sessions.open(admin, ORIGIN);
    // Fifty times the sign-ins one identity may hold, all by a level-0 token (each one a write to the store).
    const readerIds: string[] = [];
    for (let i = 0; i < 50 * MAX_SESSIONS_PER_IDENTITY + 1; i++) readerIds.push((await sessions.open(reader, ORIGIN)).id);
    expect(seen(await sessions.get(adminSession.id))).toEqual(seen(adminSession.session));
    const live = await Promise.all(readerIds.map(async (id) => (await sessions.get(id)) !== undefined));
    expect(live.filter(Boolean)).toHaveLength(MAX_SESSIONS_PER_IDENTITY);
    expect(live.slice(-MAX_SESSIONS_PER_IDENTITY).every(Boolean)).toBe(true);
  });

  it('counts a closed session no longer against its identity', async () => {
    const sessions = new WebSessions(store);
    const first = await sessions.open(reader, ORIGIN);
    const rest: string[] = [];
    for (let i = 0; i < MAX_SESSIONS_PER_IDENTITY - 1; i++) rest.push((await sessions.open(reader, ORIGIN)).id);
    await sessions.close(rest[0]);
    await sessions.open(reader, ORIGIN);
    expect(seen(await sessions.get(first.id))).toEqual(seen(first.session));
  });

  it('are known to every broker on the store, a restarted one included, and signing out on one ends the session on all', async () => {
    const here = new WebSessions(store);
    const { id, session } = await here.open(admin, ORIGIN);
    // Another broker sharing the store, or this one started again: only the store is in common.
    const there = new WebSessions(store);
    expect(seen(await there.get(id))).toEqual(seen(session));
    await there.close(id);
    expect(await here.get(id)).toBeUndefined();
  });

  it('keep no session id the store could sign a browser in with', async () => {
    const { id } = await new WebSessions(store).open(admin, ORIGIN);
    const rows = await (store as unknown as { sql: { all<T>(sql: string): Promise<T[]> } }).sql.all<Record<string, string>>('SELECT * FROM web_sessions');
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(id);
  });
});

describe('console sessions on a PostgreSQL store two brokers share', () => {
  it('are opened by one broker, found and ended by the other', async () => {
    const database = await freshDatabase(inject('postgresUrl'));
    const dirs = [mkdtempSync(join(tmpdir(), 'fm-web-pg-a-')), mkdtempSync(join(tmpdir(), 'fm-web-pg-b-'))];
    const stores = [await BrokerStore.open(dirs[0] as string, { store: database.url }), await BrokerStore.open(dirs[1] as string, { store: database.url })];
    try {
      const [one, other] = stores as [BrokerStore, BrokerStore];
      const admin = await verifyBearerToken(one, (await createIdentity(one, { name: 'pg-admin', level: 3 })).token);
      const sessions = new WebSessions(one);
      const first = await sessions.open(admin, ORIGIN);
      for (let i = 0; i < MAX_SESSIONS_PER_IDENTITY; i++) await sessions.open(admin, ORIGIN);
      // The oldest gave way to the newest, on the shared store.
      expect(await new WebSessions(other).get(first.id)).toBeUndefined();
      const { id, session } = await sessions.open(admin, ORIGIN);
      expect(seen(await new WebSessions(other).get(id))).toEqual(seen(session));
      await new WebSessions(other).close(id);
      expect(await sessions.get(id)).toBeUndefined();
    } finally {
      for (const store of stores) await store.close();
      await database.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});
