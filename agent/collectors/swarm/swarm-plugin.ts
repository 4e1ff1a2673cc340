import { swarmDomain } from '../../../shared/domains/swarm/swarm-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { agentDockerApi } from '../docker/agent-docker-api.ts';
import { SwarmCollector } from './swarm-collector.ts';

/** The swarm, where the engine is a manager. */
export const swarmPlugin: CollectorPlugin<SwarmCollector> = {
  domain: swarmDomain,
  create: ({ options, flags, log, hooks, shared }) =>
    new SwarmCollector({
      docker: agentDockerApi(options, shared),
      log,
      clusterName: flags['swarm-name'] ?? '',
      report: hooks.report,
      ...(options.snapshotIntervalMs ? { snapshotIntervalMs: options.snapshotIntervalMs } : {}),
      onAvailabilityChange: hooks.onAvailabilityChange,
    }),
};
