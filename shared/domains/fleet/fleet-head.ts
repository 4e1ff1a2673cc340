import type { DomainHead } from '../domain.ts';

/** What the broker answers itself: its agents and its index of the fleet's resources. */
export const fleetHead = {
  name: 'fleet',
  rank: 10,
  icon: '<circle cx="12" cy="5" r="2"/><circle cx="5" cy="19" r="2"/><circle cx="19" cy="19" r="2"/><path d="M12 7v5l-6 5.5M12 12l6 5.5"/>',
} as const satisfies DomainHead;
