import type { Domain } from '../domain.ts';
import { agentInfo, agentSetLabels } from './agent-actions.ts';

/** The agent itself: who it is, what it runs, its labels. */
export const agentDomain = { name: 'agent', rank: 20, actions: [agentInfo, agentSetLabels], reports: {} } as const satisfies Domain;
