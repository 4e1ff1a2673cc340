import { describe, expect, it } from 'vitest';
import type { Resource } from '../../index/resource.ts';
import type { FleetView } from '../resources/fleet-view.ts';
import { fleetNames, groupNames, matching } from './fleet-names.ts';

const resource = (type: string, name: string, extra: Partial<Resource['row']> = {}, clusterId?: string): Resource =>
  ({
    row: { id: `${type}-${name}`, name, type, ...extra },
    record: {},
    labels: {},
    ...(clusterId ? { group: clusterId } : {}),
  }) as Resource;

/** A view as FleetView builds it: already only what the identity may see. */
function view(resources: Resource[]): FleetView {
  const swarms = [
    { id: 'aaaa1111', name: 'prod', key: 'prod' },
    { id: 'bbbb2222', name: 'lab', key: 'lab' },
  ];
  return {
    resources,
    ofType: (type: string) => resources.filter((r) => r.row.type === type),
    groupsOf: (domain: string) => (domain === 'swarm' ? swarms : []),
    groupIds: (value: string) => new Set(swarms.filter((s) => s.key === value || s.id === value).map((s) => s.id)),
  } as unknown as FleetView;
}

describe('completion of fleet names', () => {
  it('matches a case-insensitive substring, sorted, each name once', () => {
    expect(matching(['monitoring_prometheus', 'web', 'Prometheus-lab', 'web'], 'PROM')).toEqual(['Prometheus-lab', 'monitoring_prometheus']);
    expect(matching(['b', 'a', 'a'], '')).toEqual(['a', 'b']);
  });

  it('offers only what the view holds, narrowed to the swarm or host already chosen', () => {
    const fleet = view([
      resource('service', 'web', {}, 'aaaa1111'),
      resource('service', 'web-canary', {}, 'bbbb2222'),
      resource('host', 'web-1'),
      resource('container', 'nginx', { host: 'web-1' }),
      resource('container', 'nginx', { host: 'web-2' }),
      resource('guest', 'vm-a', { cluster: 'pve1', host: 'pve-node' }),
    ]);
    expect(fleetNames(fleet, 'service', 'web')).toEqual(['web', 'web-canary']);
    expect(fleetNames(fleet, 'service', 'web', { cluster: 'prod' })).toEqual(['web']);
    expect(fleetNames(fleet, 'container', 'ng', { host: 'web-2' })).toEqual(['nginx']);
    expect(fleetNames(fleet, 'host', 'db')).toEqual([]);
    expect(groupNames(fleet, 'swarm', '')).toEqual(['lab', 'prod']);
    expect(fleetNames(fleet, 'guest', '', { cluster: 'pve1' }, 'id')).toEqual(['guest-vm-a']);
  });
});
