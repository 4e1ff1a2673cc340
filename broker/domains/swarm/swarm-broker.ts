import { swarmDomain } from '../../../shared/domains/swarm/swarm-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { swarmFindings } from './swarm-findings.ts';
import { swarmGroups, swarmHostGroups, swarmNodeAliases } from './swarm-groups.ts';
import { SwarmIndexer } from './swarm-indexer.ts';
import { SWARM_PROMPTS } from './swarm-prompts.ts';
import { SWARM_RESOURCES } from './swarm-resources.ts';
import { swarmManagerRole } from './swarm-roles.ts';
import { swarmRoute } from './swarm-route.ts';

/** Docker Swarm clusters as their managers report them, and the calls one manager answers for a whole swarm. */
export const swarmBroker: BrokerDomain = {
  domain: swarmDomain,
  indexer: SwarmIndexer,
  route: swarmRoute,
  groups: swarmGroups,
  findings: swarmFindings,
  hostGroups: swarmHostGroups,
  hostAliases: swarmNodeAliases,
  roles: [swarmManagerRole],
  resources: SWARM_RESOURCES,
  prompts: SWARM_PROMPTS,
  widgets: [{ name: 'swarm-topology', title: 'Swarm topology: nodes, services, placement and drain impact' }],
  instructions:
    "Swarm tools take a name wherever they ask for an id (a node's hostname); cluster (a swarm id, id prefix or name) only when the fleet holds several swarms; changes take version (as describe showed it: a change since then is a conflict, not an overwrite) and wait (answer once the service converged, at most 60 s).",
};
