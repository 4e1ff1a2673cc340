import type { PackageInventory } from '../../../shared/domains/packages/package-inventory.ts';
import type { ResourceType } from '../../../shared/domains/resource-types.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import type { Digest, Resource, RowFilter } from '../../index/resource.ts';

/** The packages domain's resource type: a host's installed package, named HOST/NAME by grants. */
export const PACKAGE: ResourceType = 'package';

type Installed = PackageInventory['packages'][number] & { ecosystem: PackageInventory['ecosystem'] };

/** The installed packages of each host, as its agent last reported them (packages_installed). */
export class PackageIndexer implements Indexer {
  readonly types = [PACKAGE];
  private readonly hosts = new Map<string, PackageInventory>();

  constructor(private readonly context: IndexContext) {}

  take(host: Host, _kind: string, payload: unknown): void {
    this.hosts.set(host.id, payload as PackageInventory);
    this.context.changed('packages', host.id);
  }

  forget(hostId: string): void {
    this.hosts.delete(hostId);
  }

  /**
   * Only when the type is asked for (find type=package, describe): a host has
   * hundreds of packages, which would drown every other match of a find by name.
   */
  rows(filter: RowFilter, hosts: ReadonlyMap<string, Host>): Resource[] {
    if (!filter.types?.has(PACKAGE)) return [];
    return [...this.hosts].flatMap(([hostId, inventory]) => {
      const host = hosts.get(hostId);
      if (!host) return [];
      return inventory.packages.flatMap((pkg): Resource[] => {
        const record: Installed = { ...pkg, ecosystem: inventory.ecosystem };
        if (filter.match && !filter.match(pkg.name, pkg.name, host.name, undefined, record)) return [];
        return [
          {
            row: { id: pkg.name, name: pkg.name, type: PACKAGE, state: 'installed', detail: pkg.version, host: host.name },
            record,
            labels: {},
            node: host.name,
            host,
          },
        ];
      });
    });
  }

  digest(resource: Resource): Digest {
    const host = resource.host as Host;
    const pkg = resource.record as Installed;
    return {
      id: pkg.name,
      name: pkg.name,
      type: PACKAGE,
      state: 'installed',
      since_unix_ms: null,
      details: { version: pkg.version, architecture: pkg.architecture, ecosystem: pkg.ecosystem },
      related: [{ type: 'host', id: host.id, name: host.name, relation: 'runs_on', host: host.name }],
      recent_failures: [],
      host: host.name,
    };
  }
}
