import { containerInventorySchema } from '../../engine/record-schemas.ts';
import type { Domain } from '../domain.ts';
import { containerEventSchema } from './container-event.ts';
import { dockerEvents, dockerInspect, dockerList, dockerLogs, dockerRestart, dockerStart, dockerStats, dockerStop, dockerTop } from './docker-actions.ts';
import { dockerHead } from './docker-head.ts';

/** The docker domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const dockerDomain = {
  ...dockerHead,
  actions: [dockerList, dockerStats, dockerLogs, dockerTop, dockerInspect, dockerStart, dockerRestart, dockerStop, dockerEvents],
  reports: { container_inventory: containerInventorySchema, container_event: containerEventSchema },
} as const satisfies Domain;
