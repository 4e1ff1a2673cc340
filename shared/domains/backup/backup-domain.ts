import type { Domain } from '../domain.ts';
import { backupCreate, backupDrill, backupList, backupRestore } from './backup-actions.ts';
import { backupHead } from './backup-head.ts';

/** The backup domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const backupDomain = {
  ...backupHead,
  actions: [backupList, backupCreate, backupDrill, backupRestore],
  reports: {},
} as const satisfies Domain;
