import { swarmHead } from '../../../shared/domains/swarm/swarm-head.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { SwarmCollector } from './swarm-collector.ts';

/** The swarm, where the engine is a manager. */
export const swarmPlugin: CollectorPlugin<SwarmCollector> = {
  domain: swarmHead,
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
