import { describe, expect, it } from 'vitest';
import type { ContainerRecord, VolumeRecord } from '../../shared/engine/records.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { FleetIndex } from './fleet-index.ts';
import { allResources, type ResourceMatch } from './index-resources.ts';

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

/** Three hosts, each with containers (one a sandbox) and a volume; the index as allResources reads it. */
function fleet() {
  const hosts = [0, 1, 2].map((n) => ({ id: `agent-${n}`, name: `host-${n}`, state: 'online', labels: {}, version: '1' }) as unknown as Host);
  const inventories = hosts.map((host, h) => ({
    hostId: host.id,
    receivedAt: 0,
    inventory: {
      taken_unix_ms: 0,
      containers: [container(h, 1), container(h, 2), container(h, 3, `sbx-${h}`)],
      volumes: [volume(`data-${h}`), volume('shared')],
    },
  }));
  const index = {
    inventoryEntries: () => inventories,
    guestEntries: () => [],
    swarmEntries: () => [],
    containerEvents: { stateSince: () => undefined },
  } as unknown as FleetIndex;
  return { hosts, index };
}

describe('allResources with a match', () => {
  const { hosts, index } = fleet();
  const full = container(1, 2).id;
  const cases: [string, ResourceMatch][] = [
    ['a host by name', (_id, name) => name === 'host-1'],
    ['a host by id', (id) => id === 'agent-2'],
    ["a container by its short id's prefix", (id) => id.startsWith(full.slice(0, 8))],
    ['a container by its full id', (_id, _name, _host, recordId) => recordId === full],
    ['a container on one host', (_id, name, host) => host === 'host-0' && name === 'app-3'],
    ['a sandbox by its id', (id) => id === 'sbx-2'],
    ['a volume on every host', (_id, name) => name === 'shared'],
    ['nothing', () => false],
  ];

  it.each(cases)('builds only the rows it passes, the same as filtering every row: %s', (_what, match) => {
    const every = allResources(index, hosts);
    const expected = every.filter((r) => match(r.row.id, r.row.name, r.row.host, (r.record as { id?: string }).id));
    expect(allResources(index, hosts, undefined, match)).toEqual(expected);
    for (const type of ['host', 'container', 'sandbox', 'volume']) {
      expect(allResources(index, hosts, new Set([type]), match)).toEqual(expected.filter((r) => r.row.type === type));
    }
  });

  it('finds what a case-insensitive search would, among every type', () => {
    const found = allResources(index, hosts, undefined, (_id, name) => name.toLowerCase().includes('app-2'));
    expect(found.map((r) => `${r.row.type} ${r.row.host}/${r.row.name}`)).toEqual([
      'container host-0/app-2',
      'container host-1/app-2',
      'container host-2/app-2',
    ]);
  });
});
