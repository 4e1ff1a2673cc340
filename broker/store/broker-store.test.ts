import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freshDatabase } from '../../test/harness/postgres-server.ts';
import { createIdentity } from '../auth/identities.ts';
import { createJoinToken, redeemJoinToken } from '../enrollment/join-tokens.ts';
import { BrokerStore, STORE_FILE } from './broker-store.ts';
import { MIGRATIONS } from './migrations.ts';

/** Where one test's store lives, on each engine, and how to make it look written by a newer fleetmesh. */
interface EngineFixture {
  name: string;
  location(): Promise<{ dataDir: string; store: string | undefined; claimNewerSchema(version: number): Promise<void> }>;
}

const cleanups: (() => unknown)[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'fm-store-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

const ENGINES: EngineFixture[] = [
  {
    name: 'SQLite',
    async location() {
      const dataDir = tempDir();
      return {
        dataDir,
        store: undefined,
        async claimNewerSchema(version) {
          const db = new Database(join(dataDir, STORE_FILE));
          db.pragma(`user_version = ${version}`);
          db.close();
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    async location() {
      const database = await freshDatabase(inject('postgresUrl'));
      cleanups.push(() => database.drop());
      return {
        dataDir: tempDir(),
        store: database.url,
        async claimNewerSchema(version) {
          const client = new pg.Client({ connectionString: database.url });
          await client.connect();
          await client.query('UPDATE schema_version SET version = $1', [version]);
          await client.end();
        },
      };
    },
  },
];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(ENGINES)('the broker store on $name', (engine) => {
  async function open(where?: Awaited<ReturnType<EngineFixture['location']>>) {
    const location = where ?? (await engine.location());
    const store = await BrokerStore.open(location.dataDir, { store: location.store });
    cleanups.push(() => store.close());
    return { store, location };
  }
  const agent = (id: string, name = 'web') => ({ id, name, tokenLabels: {}, publicKeySha256: id, enrolledAt: 1, tokenId: 't' });

  it('migrates once, and a second broker opening the same state finds it ready', async () => {
    const { store, location } = await open();
    await store.agents.insert(agent('a'));
    const { store: second } = await open(location);
    expect((await second.agents.list()).map((a) => a.id)).toEqual(['a']);
    expect(await second.problem()).toBeUndefined();
  });

  it('refuses state written by a newer schema', async () => {
    const { store, location } = await open();
    await store.close();
    await location.claimNewerSchema(MIGRATIONS.length + 5);
    await expect(BrokerStore.open(location.dataDir, { store: location.store })).rejects.toThrow(/written by a newer fleetmesh/);
  });

  it('keeps a name unique among unrevoked agents only, whatever its case', async () => {
    const { store } = await open();
    await store.agents.insert(agent('a'));
    await expect(store.agents.insert(agent('b', 'WEB'))).rejects.toThrow(/unique/i);
    await store.agents.markRevoked('a', 'test', 2);
    await store.agents.insert(agent('b'));
    expect((await store.agents.findLiveByName('WEB'))?.id).toBe('b');
  });

  it('rolls a transaction back whole when its work throws', async () => {
    const { store } = await open();
    await expect(
      store.transaction(async () => {
        await store.agents.insert(agent('a'));
        await store.roles.grant('a', { role: 'swarm-manager', scope: '*', grantedAt: 1, grantedBy: 'operator' });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await store.agents.list()).toEqual([]);
    expect((await store.roles.all()).size).toBe(0);
  });

  it('keeps each transaction its own through every await, one after another, while a statement from elsewhere stays out', async () => {
    const { store } = await open();
    const turns = async () => {
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    await store.transaction(async () => {
      await turns();
      await store.agents.insert(agent('a'));
    });
    // Started outside the transaction, and let go from inside it.
    let letGo = () => {};
    const outside = new Promise<void>((resolve) => (letGo = resolve)).then(() => store.agents.insert(agent('c', 'C')));
    await expect(
      store.transaction(async () => {
        await turns();
        await store.agents.insert(agent('b', 'B'));
        letGo();
        // A nested transaction joins this one, and goes with it.
        await store.transaction(async () => {
          await turns();
          await store.agents.insert(agent('d', 'D'));
        });
        await turns();
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    await outside;
    expect((await store.agents.list()).map((row) => row.id).sort()).toEqual(['a', 'c']);
  });

  it('spends a single-use join token once when two brokers redeem it at the same moment', async () => {
    const { store, location } = await open();
    const { store: other } = await open(location);
    const { token, id } = await createJoinToken(store, { ttlMs: 60_000, uses: 1, labels: {} });
    const now = Date.now();
    const outcomes = await Promise.allSettled([
      store.transaction(() => redeemJoinToken(store, token, now)),
      other.transaction(() => redeemJoinToken(other, token, now)),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((await store.tokens.get(id))?.uses).toBe(1);
  });

  it('has an audit row committed, for any other connection to see, once begin resolves', async () => {
    const { store, location } = await open();
    const { store: reader } = await open(location);
    const row = {
      callId: 'c1',
      startedAt: 1000,
      identity: 'ops',
      tool: 'docker_stop',
      action: 'docker.stop',
      level: 2,
      targets: ['web-1'],
      arguments: { name: 'x' },
    };
    await store.audit.begin({ ...row, outcome: 'pending', errorCode: null, targetIds: ['a1'] });
    expect(await reader.audit.recent({ limit: 5 })).toMatchObject([{ callId: 'c1', outcome: 'pending', targetIds: ['a1'], finishedAt: null }]);
    await store.audit.complete('c1', { outcome: 'ok', errorCode: null, finishedAt: 1250 });
    await store.audit.begin({ ...row, callId: 'c2', outcome: 'pending', errorCode: null });
    expect(await store.audit.markInterrupted(2000)).toBe(1);
    expect((await reader.audit.recent({ limit: 5, identity: 'ops' })).map((r) => [r.callId, r.outcome, r.durationMs])).toEqual([
      ['c2', 'interrupted', null],
      ['c1', 'ok', 250],
    ]);
  });

  it('marks interrupted the pending rows of the brokers named, or of those not alive, and notes late answers wherever they arrive', async () => {
    const { location } = await open();
    const opened = async (brokerId: string | undefined) => {
      const store = await BrokerStore.open(location.dataDir, { store: location.store, brokerId });
      cleanups.push(() => store.close());
      return store;
    };
    const [a, b, c, single] = await Promise.all([opened('a'), opened('b'), opened('c'), opened(undefined)]);
    const row = { startedAt: 1000, identity: 'ops', tool: 'docker_stop', action: 'docker.stop', level: 2, targets: ['web-1'], arguments: {}, errorCode: null };
    await a.audit.begin({ ...row, callId: 'on-a', outcome: 'pending' });
    await b.audit.begin({ ...row, callId: 'on-b', outcome: 'pending' });
    await c.audit.begin({ ...row, callId: 'on-c', outcome: 'pending' });
    await single.audit.begin({ ...row, callId: 'unowned', outcome: 'pending' });
    expect(await a.audit.markInterrupted(2000, { brokerIds: ['b'], note: 'broker b died' })).toBe(1);
    expect(await a.audit.markInterrupted(2000, { brokerIds: ['b'], note: 'broker b died' })).toBe(0);
    // Alive: a and b; c is gone, and a row no broker owns is left alone.
    expect(await a.audit.markInterrupted(3000, { except: ['a', 'b'] })).toBe(1);
    await c.audit.noteLate('on-b', 'web-1 answered ok after 1200 ms');
    await a.audit.complete('on-a', { outcome: 'error', errorCode: 'deadline_exceeded', finishedAt: 2500 });
    await c.audit.noteLate('on-a', 'web-2 answered ok after 3000 ms');
    await a.audit.complete('on-a', { outcome: 'ok', errorCode: null, finishedAt: 2600, note: 'web-3 answered ok after 3100 ms' });
    const rows = Object.fromEntries((await single.audit.recent({ limit: 10 })).map((r) => [r.callId, r]));
    expect(rows['on-a']).toMatchObject({ outcome: 'ok', brokerId: 'a', note: 'web-2 answered ok after 3000 ms; web-3 answered ok after 3100 ms' });
    expect(rows['on-b']).toMatchObject({ outcome: 'interrupted', brokerId: 'b', finishedAt: 2000, note: 'broker b died; web-1 answered ok after 1200 ms' });
    expect(rows['on-c']).toMatchObject({ outcome: 'interrupted', brokerId: 'c', note: null });
    expect(rows.unowned).toMatchObject({ outcome: 'pending', brokerId: null });
  });

  it('ends as failed the working MCP tasks of the brokers named, or of those not alive, keeping their last progress, until their own end replaces it', async () => {
    const { location } = await open();
    const opened = async (brokerId: string | undefined) => {
      const store = await BrokerStore.open(location.dataDir, { store: location.store, brokerId });
      cleanups.push(() => store.close());
      return store;
    };
    const [a, b, c, single] = await Promise.all([opened('a'), opened('b'), opened('c'), opened(undefined)]);
    const task = {
      identityId: 'i1',
      tool: 'update_service',
      status: 'working' as const,
      statusMessage: 'update_service: started',
      createdAt: 1000,
      updatedAt: 1000,
      ttlMs: 5000,
      expiresAt: 6000,
    };
    await a.mcpTasks.insert({ ...task, taskId: 'on-a' });
    await b.mcpTasks.insert({ ...task, taskId: 'on-b' });
    await c.mcpTasks.insert({ ...task, taskId: 'on-c' });
    await single.mcpTasks.insert({ ...task, taskId: 'unowned' });
    await b.mcpTasks.progress('on-b', '1 of 2 hosts answered (web-1: answered)', 1500);
    await b.mcpTasks.audited('on-b', 'call-b');
    expect(await a.mcpTasks.interrupt({ brokerIds: ['b'] }, 'broker b left the cluster', 2000)).toBe(1);
    expect(await a.mcpTasks.interrupt({ brokerIds: ['b'] }, 'broker b left the cluster', 2000)).toBe(0);
    expect(await a.mcpTasks.progress('on-b', 'later', 2100)).toBe(false);
    // Alive: a and b; c is gone, and a task no broker owns is left alone.
    expect(await a.mcpTasks.interrupt({ except: ['a', 'b'] }, 'the broker stopped', 3000)).toBe(1);
    expect(await single.mcpTasks.get('i1', 'on-b', 2000)).toMatchObject({
      status: 'failed',
      statusMessage: 'broker b left the cluster; last progress: 1 of 2 hosts answered (web-1: answered)',
      result: null,
      auditId: 'call-b',
      expiresAt: 7000,
    });
    expect(await single.mcpTasks.get('i1', 'on-c', 3000)).toMatchObject({
      status: 'failed',
      statusMessage: 'the broker stopped; last progress: update_service: started',
    });
    expect(await single.mcpTasks.get('i1', 'on-a', 3000)).toMatchObject({ status: 'working' });
    expect(await single.mcpTasks.get('i1', 'unowned', 3000)).toMatchObject({ status: 'working' });
    // Broker c was only cut off: its own end replaces the interruption.
    expect(await c.mcpTasks.finish('on-c', 'completed', 'update_service: done', { content: [] }, 4000)).toBe(true);
    expect(await single.mcpTasks.get('i1', 'on-c', 4000)).toMatchObject({ status: 'completed', result: { content: [] } });
    expect(await c.mcpTasks.finish('on-c', 'failed', 'again', { content: [] }, 4100)).toBe(false);
  });

  it("keeps a metrics figure a newer reading of the same minute lacks, and a host's fullest disk", async () => {
    const { store } = await open();
    const row = {
      kind: 'host' as const,
      entity: 'h1',
      minute: 60_000,
      host_id: 'h1',
      name: 'web-1',
      service: null,
      cpu_percent: 10,
      memory_bytes: 1e9,
      disk_percent: 42.5,
    };
    await store.metrics.upsert([{ ...row, net_bytes_per_s: 500 }]);
    await store.metrics.upsert([{ ...row, cpu_percent: 20.5, net_bytes_per_s: null }]);
    expect(await store.metrics.rows('host', { entities: ['h1'] }, 0)).toEqual([{ ...row, cpu_percent: 20.5, net_bytes_per_s: 500 }]);
    await store.metrics.prune(120_000, 1000);
    expect(await store.metrics.rows('host', {}, 0)).toEqual([]);
  });

  it("writes a fleet's minute of metrics whole, over several statements, and updates it in place", async () => {
    const { store } = await open();
    const rows = (minute: number, cpu: number, net: number | null) =>
      Array.from({ length: 1234 }, (_, i) => ({
        kind: 'container' as const,
        entity: `h${i % 100}/c${i}`,
        minute,
        host_id: `h${i % 100}`,
        name: `c${i}`,
        service: i % 2 ? 'web' : null,
        cpu_percent: cpu,
        memory_bytes: i,
        net_bytes_per_s: net,
        disk_percent: null,
      }));
    await store.metrics.upsert(rows(60_000, 1, 10));
    await store.metrics.upsert([...rows(60_000, 2, null), ...rows(120_000, 3, 30)]);
    const stored = await store.metrics.rows('container', {}, 0);
    expect(stored).toHaveLength(2468);
    expect(stored.filter((row) => row.minute === 60_000).every((row) => row.cpu_percent === 2 && row.net_bytes_per_s === 10)).toBe(true);
    expect(stored.filter((row) => row.minute === 120_000).every((row) => row.cpu_percent === 3 && row.net_bytes_per_s === 30)).toBe(true);
    expect(await store.metrics.rows('container', { service: 'web' }, 120_000)).toHaveLength(617);
    const ofTwoHosts = await store.metrics.rows('container', { hostIds: ['h1', 'h2'] }, 120_000);
    expect(ofTwoHosts).toHaveLength(26);
    expect(new Set(ofTwoHosts.map((row) => row.host_id))).toEqual(new Set(['h1', 'h2']));
  });

  it("averages each host's or container's minutes since a time, on the hosts asked about only, a figure none had staying null", async () => {
    const { store } = await open();
    const row = (host: string, name: string, minute: number, cpu: number | null, disk: number | null) => ({
      kind: 'container' as const,
      entity: `${host}/${name}`,
      minute,
      host_id: host,
      name,
      service: null,
      cpu_percent: cpu,
      memory_bytes: 100,
      net_bytes_per_s: null,
      disk_percent: disk,
    });
    await store.metrics.upsert([
      row('h1', 'web', 60_000, 10, null),
      row('h1', 'web', 120_000, 20, null),
      row('h1', 'web', 0, 99, null),
      row('h1', 'db', 60_000, null, null),
      row('h1', 'db', 120_000, 4, 50),
      row('h2', 'web', 60_000, 7, null),
      row('h3', 'web', 60_000, 1000, null),
    ]);
    expect(await store.metrics.means('container', ['h2', 'h1'], 60_000)).toEqual([
      { entity: 'h1/db', host_id: 'h1', name: 'db', cpu_percent: 4, memory_bytes: 100, net_bytes_per_s: null, disk_percent: 50 },
      { entity: 'h1/web', host_id: 'h1', name: 'web', cpu_percent: 15, memory_bytes: 100, net_bytes_per_s: null, disk_percent: null },
      { entity: 'h2/web', host_id: 'h2', name: 'web', cpu_percent: 7, memory_bytes: 100, net_bytes_per_s: null, disk_percent: null },
    ]);
    expect(await store.metrics.means('host', ['h1'], 0)).toEqual([]);
  });

  it("sums each service's containers per minute, on the hosts asked about only", async () => {
    const { store } = await open();
    const row = (host: string, name: string, service: string | null, minute: number, cpu: number | null, net: number | null) => ({
      kind: 'container' as const,
      entity: `${host}/${name}`,
      minute,
      host_id: host,
      name,
      service,
      cpu_percent: cpu,
      memory_bytes: 100,
      net_bytes_per_s: net,
      disk_percent: null,
    });
    await store.metrics.upsert([
      row('h1', 'web.1', 'web', 60_000, 10, null),
      row('h2', 'web.2', 'web', 60_000, 5.5, null),
      row('h3', 'web.3', 'web', 60_000, 1000, 7),
      row('h1', 'db.1', 'db', 60_000, 2, 3),
      row('h1', 'lone', null, 60_000, 50, 1),
      row('h1', 'web.1', 'web', 120_000, 20, 4),
      row('h1', 'web.1', 'web', 0, 99, 99),
    ]);
    expect(await store.metrics.serviceMinutes(['h1', 'h2'], 60_000)).toEqual([
      { service: 'db', minute: 60_000, cpu_percent: 2, memory_bytes: 100, net_bytes_per_s: 3 },
      { service: 'web', minute: 60_000, cpu_percent: 15.5, memory_bytes: 200, net_bytes_per_s: null },
      { service: 'web', minute: 120_000, cpu_percent: 20, memory_bytes: 100, net_bytes_per_s: 4 },
    ]);
    expect(await store.metrics.serviceMinutes([], 0)).toEqual([]);
  });

  it('prunes expired minutes and the oldest past the cap a slice at a time, other work running between slices', async () => {
    const { store } = await open();
    const minute = (at: number, hosts: number) =>
      Array.from({ length: hosts }, (_, i) => ({
        kind: 'host' as const,
        entity: `h${i}`,
        minute: at,
        host_id: `h${i}`,
        name: `host-${i}`,
        service: null,
        cpu_percent: 1,
        memory_bytes: 1,
        net_bytes_per_s: null,
        disk_percent: 50,
      }));
    await store.metrics.upsert([...minute(60_000, 2500), ...minute(120_000, 2500), ...minute(180_000, 2500), ...minute(240_000, 100)]);
    let turns = 0;
    let pruned = false;
    const other = () => {
      if (pruned) return;
      turns += 1;
      setImmediate(other);
    };
    setImmediate(other);
    // Minute 60,000 has expired; of the 5,100 rows left, the cap keeps the newest 2,600: minutes 180,000 and 240,000.
    await store.metrics.prune(120_000, 2600);
    pruned = true;
    expect(turns).toBeGreaterThan(1);
    const left = await store.metrics.rows('host', {}, 0);
    expect(left).toHaveLength(2600);
    expect(new Set(left.map((row) => row.minute))).toEqual(new Set([180_000, 240_000]));
  });

  it("reads the metrics of more hosts than one statement lists, in the store's order and summed once", async () => {
    const { store } = await open();
    const hosts = Array.from({ length: 1234 }, (_, i) => `h${String(i).padStart(4, '0')}`);
    const row = (host: string, minute: number, cpu: number | null) => ({
      kind: 'container' as const,
      entity: `${host}/web.1`,
      minute,
      host_id: host,
      name: 'web.1',
      service: 'web',
      cpu_percent: cpu,
      memory_bytes: 2,
      net_bytes_per_s: null,
      disk_percent: null,
    });
    await store.metrics.upsert(hosts.flatMap((host, i) => [row(host, 60_000, i % 2 ? 1 : null), row(host, 120_000, 0.5)]));
    const asked = [...hosts].reverse().filter((_, i) => i % 3 !== 0);
    // Hosts with no rows, enough to pass both engines' parameter limits (SQLite 32,766, PostgreSQL 65,535).
    const gone = Array.from({ length: 70_000 }, (_, i) => `gone-${i}`);
    const rows = await store.metrics.rows('container', { entities: [...gone, ...asked].map((host) => `${host}/web.1`) }, 0);
    expect(rows).toHaveLength(asked.length * 2);
    const order = (a: { minute: number; entity: string }, b: { minute: number; entity: string }) =>
      a.minute - b.minute || (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0);
    expect(rows).toEqual([...rows].sort(order));
    expect(new Set(rows.map((found) => found.host_id))).toEqual(new Set(asked));
    const odd = asked.filter((host) => Number(host.slice(1)) % 2 === 1).length;
    expect(await store.metrics.serviceMinutes([...asked, ...gone], 0)).toEqual([
      { service: 'web', minute: 60_000, cpu_percent: odd, memory_bytes: 2 * asked.length, net_bytes_per_s: null },
      { service: 'web', minute: 120_000, cpu_percent: 0.5 * asked.length, memory_bytes: 2 * asked.length, net_bytes_per_s: null },
    ]);
  });

  it("records a fleet's last-seen times over several statements, and no other agent's", async () => {
    const { store } = await open();
    for (let i = 0; i < 1234; i++) {
      await store.agents.insert({ id: `a${i}`, name: `host-${i}`, tokenLabels: {}, publicKeySha256: 'k', enrolledAt: 1, tokenId: 't' });
    }
    const seen = new Map<string, number>(Array.from({ length: 1200 }, (_, i) => [`a${i}`, 1_796_000_000_000 + i]));
    await store.agents.touch(seen);
    const rows = await store.agents.list();
    expect(rows).toHaveLength(1234);
    for (const row of rows) expect(row.lastSeenAt).toBe(seen.get(row.id) ?? null);
  });

  it("records many agents' states over several statements, keeping a last-seen time when none is given, and no other agent's", async () => {
    const { store } = await open();
    for (let i = 0; i < 1234; i++) {
      await store.agents.insert({ id: `a${i}`, name: `host-${i}`, tokenLabels: {}, publicKeySha256: 'k', enrolledAt: 1, tokenId: 't' });
    }
    await store.agents.touch(new Map([['a1', 1_796_000_000_001]]));
    const changes = new Map(
      Array.from({ length: 1100 }, (_, i) => [
        `a${i}`,
        { state: i % 2 ? ('online' as const) : ('stale' as const), lastSeenAt: i === 1 ? null : 1_796_000_000_000 + i },
      ]),
    );
    await store.agents.setStates(changes);
    for (const row of await store.agents.list()) {
      const change = changes.get(row.id);
      expect(row.state).toBe(change?.state ?? 'offline');
      expect(row.lastSeenAt).toBe(row.id === 'a1' ? 1_796_000_000_001 : (change?.lastSeenAt ?? null));
    }
  });

  it('tells a watching broker when another connection revokes an agent or grants a role', async () => {
    const { store, location } = await open();
    const { store: admin } = await open(location);
    await store.agents.insert(agent('a'));
    const before = await store.dataVersion();
    await admin.roles.grant('a', { role: 'pve-member', scope: 'lab', grantedAt: 5, grantedBy: 'operator' });
    const granted = await store.dataVersion();
    expect(granted).not.toBe(before);
    // One agent's grants, read alone as an agent attaches.
    expect(await store.roles.of('a')).toEqual([{ role: 'pve-member', scope: 'lab', grantedAt: 5, grantedBy: 'operator' }]);
    expect(await store.roles.of('nobody')).toEqual([]);
    await admin.agents.markRevoked('a', 'test', 6);
    expect(await store.dataVersion()).not.toBe(granted);
  });

  it("reads a certificate with its revocation in one statement: none, then the revocation's time", async () => {
    const { store } = await open();
    await store.agents.insert(agent('a'));
    const certificate = { serial: 's1', agentId: 'a', issuedAt: 1, notBefore: 1, notAfter: 9, publicKeySha256: 'k', issuedBy: 'enroll' as const, caPin: null };
    await store.certificates.insert(certificate);
    expect(await store.certificates.withRevocation('s1')).toEqual({ ...certificate, revokedAt: null });
    expect(await store.certificates.withRevocation('s2')).toBeUndefined();
    expect(await store.certificates.revokeAllOf('a', 'test', 7)).toEqual(['s1']);
    expect(await store.certificates.withRevocation('s1')).toEqual({ ...certificate, revokedAt: 7 });
  });

  it('records a task failure once, however often it is reported', async () => {
    const { store } = await open();
    const failure = { taskId: 't1', clusterId: 'c', serviceId: 's', at: 5000 };
    await store.taskFailures.record([failure]);
    await store.taskFailures.record([failure, { ...failure, taskId: 't2', at: 9000 }]);
    expect((await store.taskFailures.since(0)).map((f) => f.taskId)).toEqual(['t1', 't2']);
    await store.taskFailures.prune(6000);
    expect((await store.taskFailures.since(0)).map((f) => f.taskId)).toEqual(['t2']);
  });

  it('keeps an MCP session for every broker on the store: one serves it at a time, and it goes when idle or its identity is revoked', async () => {
    const { store, location } = await open();
    const { store: other } = await open(location);
    const kept = await createIdentity(store, { name: 'kept', level: 1 });
    const revoked = await createIdentity(store, { name: 'gone', level: 1 });
    const session = (sessionId: string, identityId: string, lastUsedAt: number) => ({
      sessionId,
      identityId,
      protocolVersion: '2025-06-18',
      clientInfo: { name: 'c', version: '1' },
      clientCapabilities: { elicitation: {} },
      heldBy: 'broker-1',
      createdAt: lastUsedAt,
      lastUsedAt,
    });
    const now = Date.now();
    await store.mcpSessions.insert(session('s1', kept.id, now));
    await store.mcpSessions.insert(session('s2', revoked.id, now));
    await store.mcpSessions.insert(session('s3', kept.id, now - 10_000));
    await store.mcpSessions.setSubscriptions('s1', ['fleet://status']);
    await store.mcpSessions.setLogLevel('s1', 'warning');

    expect(await other.mcpSessions.get('s1', now - 5000)).toMatchObject({
      identityId: kept.id,
      clientInfo: { name: 'c', version: '1' },
      clientCapabilities: { elicitation: {} },
      logLevel: 'warning',
      subscriptions: ['fleet://status'],
    });
    expect(await other.mcpSessions.get('s3', now - 5000)).toBeUndefined();
    expect(await other.mcpSessions.take('s1', 'broker-2', now + 1)).toBe(true);
    // What moved since a time: broker-1 learns that s1 went to broker-2; broker-2 lost nothing; nothing moved later.
    expect(await store.mcpSessions.movedSince('broker-1', now + 1)).toEqual(['s1']);
    expect(await store.mcpSessions.movedSince('broker-2', now + 1)).toEqual([]);
    expect(await store.mcpSessions.movedSince('broker-1', now + 2)).toEqual([]);

    expect(await store.identities.revokedSince(now)).toEqual([]);
    await store.identities.revoke(revoked.id, now);
    expect(await other.identities.revokedSince(now)).toEqual([revoked.id]);
    expect(await other.identities.revokedSince(now + 1)).toEqual([]);
    await other.mcpSessions.prune(now - 5000, now);
    expect(await store.mcpSessions.get('s2', 0)).toBeUndefined();
    expect(await store.mcpSessions.get('s3', 0)).toBeUndefined();
    await store.mcpSessions.delete(['s1']);
    expect(await other.mcpSessions.take('s1', 'broker-1', now + 2)).toBe(false);
  });
});

describe('the SQLite store', () => {
  it('keeps its file in WAL mode in the data dir', async () => {
    const dir = tempDir();
    const store = await BrokerStore.open(dir);
    await store.close();
    const db = new Database(join(dir, STORE_FILE), { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    db.close();
  });
});
