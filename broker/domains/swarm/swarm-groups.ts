import type { ResourceGroups } from '../broker-domain.ts';
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
