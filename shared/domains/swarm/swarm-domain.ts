import { swarmSnapshotSchema } from '../../engine/record-schemas.ts';
import type { Domain } from '../domain.ts';
import * as swarm from './swarm-actions.ts';

/** Docker Swarm clusters, through one manager agent each. */
export const swarmDomain = {
  name: 'swarm',
  rank: 50,
  icon: '<path d="M12 2l8 4.5v9L12 20l-8-4.5v-9zM12 11l8-4.5M12 11v9M12 11L4 6.5"/>',
  actions: [
    swarm.getClusterStatus,
    swarm.getTopology,
    swarm.getLogs,
    swarm.getEvents,
    swarm.watchService,
    swarm.scaleService,
    swarm.updateServiceImage,
    swarm.rollbackService,
    swarm.restartService,
    swarm.removeTask,
    swarm.updateService,
    swarm.updateServiceSecrets,
    swarm.updateServiceConfigs,
    swarm.updateServiceMounts,
    swarm.createSecret,
    swarm.createConfig,
    swarm.updateNodeLabels,
    swarm.updateNode,
    swarm.removeService,
    swarm.removeSecret,
    swarm.removeConfig,
    swarm.removeNetwork,
    swarm.removeVolume,
  ],
  reports: { swarm_snapshot: swarmSnapshotSchema },
  flags: {
    'swarm-name': { type: 'string', description: 'a name for the swarm this engine manages, which swarm tools accept as cluster', placeholder: 'NAME' },
  },
} as const satisfies Domain;
