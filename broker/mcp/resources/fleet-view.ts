import type { Host } from '../../agents/agent-registry.ts';
import type { Identity } from '../../auth/identities.ts';
import type { GroupKey } from '../../domains/broker-domain.ts';
import { BROKER_DOMAINS } from '../../domains/broker-domains.ts';
import type { FleetIndex } from '../../index/fleet-index.ts';
import { type Resource, type ResourceMatch, visible } from '../../index/resource.ts';

/** Whether a value names a group: its id, URI key or name, or a prefix of its id. */
const names = (group: GroupKey, value: string) =>
  group.id === value || group.key === value || group.name === value || (value.length >= 4 && group.id.startsWith(value));

/**
 * What one identity may see of the fleet index, for resources, completion,
 * prompts and notifications: the index's resources passed through `visible`
 * (the rule tool results are filtered by), and the shared objects of each
 * domain (its groups) it sees anything of, worked out when first asked.
 */
export class FleetView {
  readonly hosts: readonly Host[];
  readonly resources: readonly Resource[];
  private readonly groups = new Map<string, GroupKey[]>();

  constructor(
    readonly identity: Identity,
    readonly index: FleetIndex,
    hosts: readonly Host[],
    /** Only resources of these types, and of those only what `match` passes (a view for links to a few of them); every resource when absent. */
    types?: ReadonlySet<string>,
    match?: ResourceMatch,
  ) {
    this.hosts = hosts;
    this.resources = index.rows({ types, match }).filter((resource) => visible(identity, resource));
  }

  ofType(type: string): Resource[] {
    return this.resources.filter((resource) => resource.row.type === type);
  }

  /** The groups of a domain this identity sees anything of; none for a domain without groups. */
  groupsOf(domain: string): readonly GroupKey[] {
    let groups = this.groups.get(domain);
    if (!groups) {
      groups = BROKER_DOMAINS.find((broker) => broker.domain.name === domain)?.groups?.visible(this.identity, this.index, this.hosts) ?? [];
      this.groups.set(domain, groups);
    }
    return groups;
  }

  /** The visible group of a domain a `{cluster}` value names, as the `cluster` argument of its tools does: id, name, or id prefix. */
  group(domain: string, value: string): GroupKey | undefined {
    const matches = this.groupsOf(domain).filter((group) => names(group, value));
    return matches.length === 1 ? matches[0] : undefined;
  }

  /** How URIs name a group of a domain. */
  groupKey(domain: string, id: string): string {
    return this.groupsOf(domain).find((group) => group.id === id)?.key ?? id;
  }

  /** The ids of the visible groups a value names, one per domain at most. */
  groupIds(value: string): Set<string> {
    return new Set(BROKER_DOMAINS.flatMap((broker) => (broker.groups ? [this.group(broker.domain.name, value)?.id ?? []].flat() : [])));
  }

  /** Names of the hosts this identity may see. */
  hostNames(): string[] {
    return this.ofType('host').map((r) => r.row.name);
  }
}
