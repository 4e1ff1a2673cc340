import { describe, expect, it } from 'vitest';
import type { Resource } from '../../index/resource.ts';
import { DOMAIN_RESOURCES, entriesOf, extraUrisOf, uriOf } from './domain-resources.ts';
import type { FleetView } from './fleet-view.ts';

const resource = (row: Resource['row'], clusterId?: string): Resource =>
  ({ row, record: {}, labels: {}, ...(clusterId ? { group: clusterId } : {}) }) as Resource;

function view(resources: Resource[]): FleetView {
  const swarms = [{ id: 'abcdef123456', name: 'prod', key: 'prod' }];
  return {
    resources,
    ofType: (type: string) => resources.filter((r) => r.row.type === type),
    groupsOf: (domain: string) => (domain === 'swarm' ? swarms : []),
    groupKey: (_domain: string, id: string) => swarms.find((s) => s.id === id)?.key ?? id,
  } as unknown as FleetView;
}

describe("the domains' resource URIs", () => {
  const service = resource({ id: 's1', name: 'shop_web', type: 'service', stack: 'shop' }, 'abcdef123456');
  const task = resource({ id: 'task123', name: 'shop_web.1', type: 'task' }, 'abcdef123456');
  const container = resource({ id: 'c1', name: 'odd/name,1', type: 'container', host: 'web-1' });
  const guest = resource({ id: '101', name: 'vm-a', type: 'guest', host: 'pve-a', cluster: 'pve1' });
  const host = resource({ id: 'h1', name: 'web-1', type: 'host', host: 'web-1' });
  const fleet = view([service, task, container, guest, host]);

  it('names each thing under its swarm, host or PVE cluster, by name or by id where names repeat, encoded', () => {
    expect(uriOf(service, fleet)).toBe('fleet://swarms/prod/services/shop_web');
    expect(extraUrisOf(service, fleet).map((e) => e.uri)).toEqual([
      'fleet://swarms/prod/services/shop_web/logs',
      'fleet://swarms/prod/services/shop_web/compose',
    ]);
    expect(uriOf(task, fleet)).toBe('fleet://swarms/prod/tasks/task123');
    expect(uriOf(container, fleet)).toBe('fleet://hosts/web-1/containers/odd%2Fname%2C1');
    expect(uriOf(guest, fleet)).toBe('fleet://pve/pve1/guests/101');
    expect(uriOf(host, fleet)).toBe('fleet://hosts/web-1');
  });

  it('lists one entry per thing the view holds, and the swarm-wide ones per swarm', () => {
    const swarm = DOMAIN_RESOURCES.find((d) => d.template === 'swarms/{cluster}');
    const compose = DOMAIN_RESOURCES.find((d) => d.template === 'swarms/{cluster}/services/{name}/compose');
    if (!swarm || !compose) throw new Error('the swarm domain declares its resources');
    expect(entriesOf(swarm, fleet).map((e) => e.uri)).toEqual(['fleet://swarms/prod']);
    expect(entriesOf(compose, fleet)).toEqual([
      {
        uri: 'fleet://swarms/prod/services/shop_web/compose',
        name: 'swarm_service_compose:prod/shop_web',
        title: 'Service as Compose prod/shop_web',
        mimeType: 'application/yaml',
      },
    ]);
    expect(entriesOf(compose, view([]))).toEqual([]);
  });
});
