import type { Domain } from '../domain.ts';
import { logTail } from './log-actions.ts';
import { logsHead } from './logs-head.ts';

/** The logs domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const logsDomain = {
  ...logsHead,
  actions: [logTail],
  reports: {},
} as const satisfies Domain;
