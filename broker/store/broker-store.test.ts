import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerStore, STORE_FILE, schemaVersion } from './broker-store.ts';
import { MIGRATIONS } from './migrations.ts';

describe('the broker store', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-store-'));
    dirs.push(dir);
    return dir;
  };

  it('creates every table at the latest schema version, once', () => {
    const dir = fresh();
    BrokerStore.open(dir).close();
    const store = BrokerStore.open(dir);
    expect(schemaVersion(store.db)).toBe(MIGRATIONS.length);
    const tables = (store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['agents', 'join_tokens', 'certificates', 'revocations', 'broker_meta']));
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    store.close();
  });

  it('refuses a data dir written by a newer schema', () => {
    const dir = fresh();
    BrokerStore.open(dir).close();
    const db = new Database(join(dir, STORE_FILE));
    db.pragma(`user_version = ${MIGRATIONS.length + 5}`);
    db.close();
    expect(() => BrokerStore.open(dir)).toThrow(/written by a newer fleetmesh/);
  });

  it('keeps a name unique among unrevoked agents only', () => {
    const store = BrokerStore.open(fresh());
    const agent = (id: string) => ({ id, name: 'web', tokenLabels: {}, publicKeySha256: id, enrolledAt: 1, tokenId: 't' });
    store.agents.insert(agent('a'));
    expect(() => store.agents.insert(agent('b'))).toThrow(/UNIQUE/);
    store.agents.markRevoked('a', 'test', 2);
    store.agents.insert(agent('b'));
    expect(store.agents.findLiveByName('WEB')?.id).toBe('b');
    store.close();
  });
});
