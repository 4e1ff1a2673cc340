import type { Domain } from '../domain.ts';
import { fleetStatus, listAgents, revokeAgent } from './fleet-actions.ts';
import { fleetHead } from './fleet-head.ts';
import { describe, find, getMetrics, getRecommendations } from './index-actions.ts';

/** The fleet domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const fleetDomain = {
  ...fleetHead,
  actions: [fleetStatus, listAgents, revokeAgent, find, describe, getMetrics, getRecommendations],
  reports: {},
} as const satisfies Domain;
