import type { Domain } from '../domain.ts';
import { notifyTest } from './notify-actions.ts';
import { notifyHead } from './notify-head.ts';

/** The notify domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const notifyDomain = {
  ...notifyHead,
  actions: [notifyTest],
  reports: {},
} as const satisfies Domain;
