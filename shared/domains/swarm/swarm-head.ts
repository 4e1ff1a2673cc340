import type { DomainHead } from '../domain.ts';

/** Docker Swarm clusters, through one manager agent each. */
export const swarmHead = {
  name: 'swarm',
  rank: 50,
  icon: '<path d="M12 2l8 4.5v9L12 20l-8-4.5v-9zM12 11l8-4.5M12 11v9M12 11L4 6.5"/>',
  flags: {
    'swarm-name': { type: 'string', description: 'a name for the swarm this engine manages, which swarm tools accept as cluster', placeholder: 'NAME' },
  },
} as const satisfies DomainHead;
