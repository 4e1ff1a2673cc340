import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContainerRecord, NetworkRecord, VolumeRecord } from '../../shared/engine/records.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { AgentRegistry, type Host } from '../agents/agent-registry.ts';
import { BrokerMetrics } from '../metrics/broker-metrics.ts';
import { BrokerStore } from '../store/broker-store.ts';
import { FleetIndex } from './fleet-index.ts';
import type { ResourceMatch } from './resource.ts';

function container(host: number, n: number, sandbox?: string): ContainerRecord {
  return {
    id: `${host.toString(16).padStart(4, '0')}${n.toString(16).padStart(4, '0')}`.repeat(8),
    name: `app-${n}`,
    image: 'busybox',
    state: 'running',
    status: 'Up',
    created_unix_ms: 0,
    labels: {},
    service_name: null,
    task_id: null,
    task_name: null,
    stack: null,
    sandbox_id: sandbox ?? null,
  };
}

const volume = (name: string): VolumeRecord => ({ name, driver: 'local', scope: 'local', labels: {}, stack: null, has_options: false });

const network = (host: number, name: string, driver: string): NetworkRecord => ({
  id: `${host}${name}`.padEnd(64, 'f'),
  name,
  driver,
  scope: 'local',
  attachable: false,
  ingress: false,
  labels: {},
  stack: null,
});

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Three hosts, each with containers (one a sandbox), volumes and local networks (but the last, an agent older than them), reported to a real index. */
async function fleet() {
  const dir = mkdtempSync(join(tmpdir(), 'fm-rows-'));
  const store = await BrokerStore.open(dir);
  for (const n of [0, 1, 2])
    await store.agents.insert({ id: `agent-${n}`, name: `host-${n}`, tokenLabels: {}, publicKeySha256: `k${n}`, enrolledAt: 0, tokenId: 't' });
  const registry = new AgentRegistry(store, { heartbeatIntervalMs: 1000, staleAfterMissed: 3, offlineAfterMissed: 6, storePollMs: 60_000 }, silentLogger);
  await registry.start();
  const index = new FleetIndex(registry, store, silentLogger, new BrokerMetrics());
  index.start();
  cleanups.push(async () => {
    index.stop();
    await registry.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  [0, 1, 2].forEach((h) => {
    const inventory = {
      taken_unix_ms: 0,
      containers: [container(h, 1), container(h, 2), container(h, 3, `sbx-${h}`)],
      volumes: [volume(`data-${h}`), volume('shared')],
      ...(h < 2 ? { networks: [network(h, 'bridge', 'bridge'), network(h, `app-net-${h}`, 'macvlan')] } : {}),
    };
    registry.emit('report', registry.get(`agent-${h}`) as Host, 'container_inventory', inventory, 0);
  });
  return index;
}

describe('the index rows with a match', () => {
  let index: FleetIndex;
  beforeAll(async () => {
    index = await fleet();
  });
  const full = container(1, 2).id;
  const cases: [string, ResourceMatch][] = [
    ['a host by name', (_id, name) => name === 'host-1'],
    ['a host by id', (id) => id === 'agent-2'],
    ["a container by its short id's prefix", (id) => id.startsWith(full.slice(0, 8))],
    ['a container by its full id', (_id, _name, _host, recordId) => recordId === full],
    ['a container on one host', (_id, name, host) => host === 'host-0' && name === 'app-3'],
    ['a sandbox by its id', (id) => id === 'sbx-2'],
    ['a volume on every host', (_id, name) => name === 'shared'],
    ['a local network on the hosts that report them', (_id, name) => name === 'bridge'],
    ['nothing', () => false],
  ];

  it.each(cases)('builds only the rows it passes, the same as filtering every row: %s', (_what, match) => {
    const every = index.rows();
    const expected = every.filter((r) => match(r.row.id, r.row.name, r.row.host, (r.record as { id?: string }).id));
    expect(index.rows({ match })).toEqual(expected);
    for (const type of ['host', 'container', 'sandbox', 'volume', 'local_network']) {
      expect(index.rows({ types: new Set([type]), match })).toEqual(expected.filter((r) => r.row.type === type));
    }
  });

  it("lists each host's local networks, and describes one with its driver and its host", () => {
    const networks = index.rows({ types: new Set(['local_network']) });
    expect(networks.map((r) => `${r.row.host}/${r.row.name} ${r.row.detail}`).sort()).toEqual([
      'host-0/app-net-0 macvlan',
      'host-0/bridge bridge',
      'host-1/app-net-1 macvlan',
      'host-1/bridge bridge',
    ]);
    const macvlan = networks.find((r) => r.row.name === 'app-net-1');
    expect(macvlan?.row.id).toHaveLength(12);
    expect(index.digest(macvlan as (typeof networks)[number])).toMatchObject({
      type: 'local_network',
      name: 'app-net-1',
      host: 'host-1',
      details: { driver: 'macvlan', scope: 'local' },
      related: [{ type: 'host', name: 'host-1' }],
    });
  });

  it('finds what a case-insensitive search would, among every type', () => {
    const found = index.rows({ match: (_id, name) => name.toLowerCase().includes('app-2') });
    expect(found.map((r) => `${r.row.type} ${r.row.host}/${r.row.name}`)).toEqual([
      'container host-0/app-2',
      'container host-1/app-2',
      'container host-2/app-2',
    ]);
  });
});
