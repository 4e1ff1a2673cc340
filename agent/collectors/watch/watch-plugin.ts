import { watchDomain } from '../../../shared/domains/watch/watch-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { agentDockerApi } from '../docker/agent-docker-api.ts';
import { WatchCollector } from './watch-collector.ts';

/** Restarts of the containers it is asked to watch. */
export const watchPlugin: CollectorPlugin<WatchCollector> = {
  domain: watchDomain,
  create: ({ options, log, hooks, shared }) =>
    new WatchCollector({ docker: agentDockerApi(options, shared), dataDir: options.dataDir, log, report: hooks.report }),
};
