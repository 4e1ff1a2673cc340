import type { Domain } from '../domain.ts';
import { notifyTest } from './notify-actions.ts';
import { NOTIFY_FLAGS } from './notify-flags.ts';

/** Notifications the broker sends about the fleet (incidents, agents offline), and the tool that tests its channels. */
export const notifyDomain = {
  name: 'notify',
  rank: 110,
  icon: '<path d="M6 16v-5a6 6 0 0 1 12 0v5l2 2H4zM10 21h4"/>',
  actions: [notifyTest],
  reports: {},
  brokerFlags: NOTIFY_FLAGS,
} as const satisfies Domain;
