import type { Domain } from '../domain.ts';
import { containerInventorySchema } from '../swarm/swarm-reports.ts';
import { containerEventSchema } from './container-event.ts';
import { dockerEvents, dockerInspect, dockerList, dockerLogs, dockerRestart, dockerStart, dockerStats, dockerStop, dockerTop } from './docker-actions.ts';

/** Each host's Docker engine: its containers, their logs, stats and events. */
export const dockerDomain: Domain = {
  name: 'docker',
  actions: [dockerList, dockerStats, dockerLogs, dockerTop, dockerInspect, dockerStart, dockerRestart, dockerStop, dockerEvents],
  reports: { container_inventory: containerInventorySchema, container_event: containerEventSchema },
};
