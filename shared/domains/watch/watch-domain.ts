import type { Domain } from '../domain.ts';
import { watchAdd, watchCheck, watchHistory, watchList, watchRemove } from './watch-actions.ts';
import { watchHead } from './watch-head.ts';
import { incidentSchema } from './watch-incident.ts';

/** The watch domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const watchDomain = {
  ...watchHead,
  actions: [watchList, watchAdd, watchRemove, watchCheck, watchHistory],
  reports: { watch_incident: incidentSchema },
} as const satisfies Domain;
