import { swarmSnapshotSchema } from '../../engine/record-schemas.ts';
import type { Domain } from '../domain.ts';
import * as swarm from './swarm-actions.ts';
import { swarmHead } from './swarm-head.ts';

/** The swarm domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const swarmDomain = {
  ...swarmHead,
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
} as const satisfies Domain;
