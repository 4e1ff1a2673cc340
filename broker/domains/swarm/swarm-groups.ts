import type { Host } from '../../agents/agent-registry.ts';
import type { BrokerActionContext } from '../../calls/broker-action.ts';
import type { HostGroup, ResourceGroups } from '../broker-domain.ts';
import { swarmReadScope } from './swarm-grants.ts';
import { knownSwarms } from './swarm-routing.ts';

/** The swarms an identity sees anything of, each named by its operator's name where no other swarm shares it, else by its id. */
export const swarmGroups: ResourceGroups = {
  visible(identity, index, hosts) {
    const known = knownSwarms(hosts, index);
    const shared = (name: string) => known.filter((s) => s.name === name).length > 1;
    return known
      .filter((swarm) => !swarmReadScope(identity, index, swarm.id).none)
      .map((swarm) => ({ id: swarm.id, name: swarm.name, key: shared(swarm.name) ? swarm.id : swarm.name }));
  },
};

/** Each swarm's member agents (those on its nodes), named as swarm tools take the swarm, for metrics of a cluster. */
export function swarmHostGroups(context: BrokerActionContext): HostGroup[] {
  const hosts = context.registry.list();
  return knownSwarms(hosts, context.index).map((swarm) => {
    const nodeIds = new Set(swarm.snapshot?.nodes.map((n) => n.id) ?? []);
    return { id: swarm.id, name: swarm.name, hostIds: hosts.filter((h) => nodeIds.has(String(h.hello?.facts.swarm_node_id ?? ''))).map((h) => h.id) };
  });
}

/** A host is known by its swarm node id too. */
export function swarmNodeAliases(host: Host): string[] {
  const nodeId = host.hello?.facts.swarm_node_id;
  return typeof nodeId === 'string' && nodeId ? [nodeId] : [];
}
