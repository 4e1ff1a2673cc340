import type { Domain } from '../domain.ts';
import { commandList, commandRun } from './commands-actions.ts';
import { commandsHead } from './commands-head.ts';

/** The commands domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const commandsDomain = {
  ...commandsHead,
  actions: [commandList, commandRun],
  reports: {},
} as const satisfies Domain;
