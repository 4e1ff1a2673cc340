import type { Domain } from '../domain.ts';
import { installApp, installList, installPurge, installStatus, installUninstall } from './install-actions.ts';
import { installHead } from './install-head.ts';

/** The install domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const installDomain = {
  ...installHead,
  actions: [installList, installStatus, installApp, installUninstall, installPurge],
  reports: {},
} as const satisfies Domain;
