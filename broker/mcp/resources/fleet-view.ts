import type { Host } from '../../agents/agent-registry.ts';
import type { Identity } from '../../auth/identities.ts';
import { knownSwarms } from '../../calls/swarm-routing.ts';
import type { FleetIndex } from '../../index/fleet-index.ts';
import { type Resource, type ResourceMatch, visible } from '../../index/resource.ts';
import { swarmReadScope } from '../../swarm/swarm-grants.ts';

/** A swarm as resource URIs name it: by its name where that is unique in the fleet, else by its id. */
export interface SwarmKey {
  id: string;
  name: string;
  key: string;
}

/**
 * What one identity may see of the fleet index, for resources, completion,
 * prompts and notifications: the index's resources passed through `visible`
 * (the rule tool results are filtered by), and the swarms it sees anything of.
 */
export class FleetView {
  readonly hosts: readonly Host[];
  readonly resources: readonly Resource[];
  readonly swarms: readonly SwarmKey[];

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
    const known = knownSwarms(hosts, index);
    const shared = (name: string) => known.filter((s) => s.name === name).length > 1;
    this.swarms = known
      .filter((swarm) => !swarmReadScope(identity, index, swarm.id).none)
      .map((swarm) => ({ id: swarm.id, name: swarm.name, key: shared(swarm.name) ? swarm.id : swarm.name }));
  }

  ofType(type: string): Resource[] {
    return this.resources.filter((resource) => resource.row.type === type);
  }

  /** The visible swarm a `{cluster}` value names, as the `cluster` argument of swarm tools does: id, name, or id prefix. */
  swarm(value: string): SwarmKey | undefined {
    const matches = this.swarms.filter((s) => s.id === value || s.key === value || s.name === value || (value.length >= 4 && s.id.startsWith(value)));
    return matches.length === 1 ? matches[0] : undefined;
  }

  swarmKey(clusterId: string): string {
    return this.swarms.find((s) => s.id === clusterId)?.key ?? clusterId;
  }

  /** Names of the hosts this identity may see. */
  hostNames(): string[] {
    return this.ofType('host').map((r) => r.row.name);
  }
}
