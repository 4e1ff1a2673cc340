import { watchHead } from '../../../shared/domains/watch/watch-head.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { WatchCollector } from './watch-collector.ts';

/** Restarts of the containers it is asked to watch. */
export const watchPlugin: CollectorPlugin<WatchCollector> = {
  domain: watchHead,
  create: ({ options, log, hooks, engine }) => new WatchCollector({ docker: engine, dataDir: options.dataDir, log, report: hooks.report }),
};
