import type { Domain } from '../domain.ts';
import { watchAdd, watchCheck, watchHistory, watchList, watchRemove } from './watch-actions.ts';
import { incidentSchema } from './watch-incident.ts';

/** Restart detection: each agent follows its engine's events for the containers it watches and records incidents. */
export const watchDomain = {
  name: 'watch',
  rank: 90,
  icon: '<path d="M2 12s4-7 10-7 10 7 10 7-4 7-10 7S2 12 2 12z"/><circle cx="12" cy="12" r="3"/>',
  actions: [watchList, watchAdd, watchRemove, watchCheck, watchHistory],
  reports: { watch_incident: incidentSchema },
} as const satisfies Domain;
