import type { Domain } from '../domain.ts';
import * as sandbox from './sandbox-actions.ts';
import { sandboxHead } from './sandbox-head.ts';

/** The sandbox domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const sandboxDomain = {
  ...sandboxHead,
  actions: [sandbox.snapshot, sandbox.trace, sandbox.events, sandbox.cgroup, sandbox.layerstack],
  reports: {},
} as const satisfies Domain;
