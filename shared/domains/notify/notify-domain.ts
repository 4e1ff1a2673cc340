import type { Domain } from '../domain.ts';
import { notifyTest } from './notify-actions.ts';

/** Notifications the broker sends about the fleet (incidents, agents offline), and the tool that tests its channels. */
export const notifyDomain = {
  name: 'notify',
  rank: 110,
  actions: [notifyTest],
  reports: {},
} as const satisfies Domain;
