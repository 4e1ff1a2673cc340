import type { ResourceType } from '../../../shared/domains/resource-types.ts';
import type { ServiceInventory } from '../../../shared/domains/systemd/service-inventory.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import { type Digest, type Resource, type RowFilter, wantsType } from '../../index/resource.ts';
import { failedUnitNotice } from './failed-unit-notice.ts';

/** The systemd domain's resource type: a host's unit, named HOST/NAME by grants. */
export const UNIT: ResourceType = 'unit';

type Unit = ServiceInventory['units'][number];

/**
 * The services of each host, as its agent last reported them (systemd_services);
 * a unit that failed since the host's previous report (or in the first one
 * this broker takes) is an alert notice.
 */
export class UnitIndexer implements Indexer {
  readonly types = [UNIT];
  private readonly units = new Map<string, readonly Unit[]>();

  constructor(private readonly context: IndexContext) {}

  take(host: Host, _kind: string, payload: unknown): void {
    const units = (payload as ServiceInventory).units;
    const before = new Set((this.units.get(host.id) ?? []).filter((unit) => unit.active_state === 'failed').map((unit) => unit.name));
    this.units.set(host.id, units);
    for (const unit of units) {
      if (unit.active_state === 'failed' && !before.has(unit.name)) this.context.notice(failedUnitNotice(host, unit));
    }
    this.context.changed('units', host.id);
  }

  forget(hostId: string): void {
    this.units.delete(hostId);
  }

  /** The failed units of each host that reported any, by host id. */
  failed(): [hostId: string, units: Unit[]][] {
    return [...this.units].flatMap(([hostId, units]) => {
      const failed = units.filter((unit) => unit.active_state === 'failed');
      return failed.length ? [[hostId, failed] as [string, Unit[]]] : [];
    });
  }

  rows(filter: RowFilter, hosts: ReadonlyMap<string, Host>): Resource[] {
    if (!wantsType(filter, UNIT)) return [];
    return [...this.units].flatMap(([hostId, units]) => {
      const host = hosts.get(hostId);
      if (!host) return [];
      return units.flatMap((unit): Resource[] => {
        if (filter.match && !filter.match(unit.name, unit.name, host.name, undefined, unit)) return [];
        return [
          {
            row: { id: unit.name, name: unit.name, type: UNIT, state: unit.active_state, detail: unit.sub_state, host: host.name },
            record: unit,
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
    const unit = resource.record as Unit;
    return {
      id: unit.name,
      name: unit.name,
      type: UNIT,
      state: unit.active_state,
      reason: unit.active_state === 'failed' ? `sub state ${unit.sub_state}: service_status and journal_query with its unit say why` : undefined,
      since_unix_ms: unit.since_unix_ms,
      details: { description: unit.description, sub_state: unit.sub_state },
      related: [{ type: 'host', id: host.id, name: host.name, relation: 'runs_on', host: host.name }],
      recent_failures: [],
      host: host.name,
    };
  }
}
