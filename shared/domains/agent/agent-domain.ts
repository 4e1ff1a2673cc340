import type { Domain } from '../domain.ts';
import { agentInfo, agentSetLabels } from './agent-actions.ts';
import { agentHead } from './agent-head.ts';

/** The agent domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const agentDomain = {
  ...agentHead,
  actions: [agentInfo, agentSetLabels],
  reports: {},
} as const satisfies Domain;
