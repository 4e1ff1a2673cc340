import { swarmDomain } from '../../../shared/domains/swarm/swarm-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { SwarmCollector } from './swarm-collector.ts';

/** The swarm, where the engine is a manager. */
export const swarmPlugin: CollectorPlugin<SwarmCollector> = {
  domain: swarmDomain,
  create: ({ options, flags, log, hooks, engine }) =>
    new SwarmCollector({
      docker: engine,
      log,
      clusterName: flags['swarm-name'] ?? '',
      report: hooks.report,
      ...(options.snapshotIntervalMs ? { snapshotIntervalMs: options.snapshotIntervalMs } : {}),
      onAvailabilityChange: hooks.onAvailabilityChange,
    }),
};
