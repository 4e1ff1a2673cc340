import type { Domain } from '../domain.ts';
import { fleetStatus, listAgents, revokeAgent } from './fleet-actions.ts';
import { describe, find, getMetrics, getRecommendations } from './index-actions.ts';

/** What the broker answers itself: its agents and its index of the fleet's resources. */
export const fleetDomain = {
  name: 'fleet',
  rank: 10,
  actions: [fleetStatus, listAgents, revokeAgent, find, describe, getMetrics, getRecommendations],
  reports: {},
} as const satisfies Domain;
