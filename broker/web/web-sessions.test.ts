import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentity, type Identity, verifyBearerToken } from '../auth/identities.ts';
import { BrokerStore } from '../store/broker-store.ts';
import { MAX_SESSIONS_PER_IDENTITY, WebSessions } from './web-sessions.ts';

const ORIGIN = 'http://127.0.0.1:7401';

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
    const adminSession = sessions.open(admin, ORIGIN);
    // More sign-ins than the whole console once held, all by a level-0 token.
    const readerIds = Array.from({ length: 10_001 }, () => sessions.open(reader, ORIGIN).id);
    expect(await sessions.get(adminSession.id)).toBe(adminSession.session);
    const live = await Promise.all(readerIds.map(async (id) => (await sessions.get(id)) !== undefined));
    expect(live.filter(Boolean)).toHaveLength(MAX_SESSIONS_PER_IDENTITY);
    expect(live.slice(-MAX_SESSIONS_PER_IDENTITY).every(Boolean)).toBe(true);
  });

  it('counts a closed session no longer against its identity', async () => {
    const sessions = new WebSessions(store);
    const first = sessions.open(reader, ORIGIN);
    const rest = Array.from({ length: MAX_SESSIONS_PER_IDENTITY - 1 }, () => sessions.open(reader, ORIGIN).id);
    sessions.close(rest[0]);
    sessions.open(reader, ORIGIN);
    expect(await sessions.get(first.id)).toBe(first.session);
  });
});
