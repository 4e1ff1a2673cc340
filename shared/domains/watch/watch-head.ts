import type { DomainHead } from '../domain.ts';

/** Restart detection: each agent follows its engine's events for the containers it watches and records incidents. */
export const watchHead = {
  name: 'watch',
  rank: 90,
  icon: '<path d="M2 12s4-7 10-7 10 7 10 7-4 7-10 7S2 12 2 12z"/><circle cx="12" cy="12" r="3"/>',
} as const satisfies DomainHead;
