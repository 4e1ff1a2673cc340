import type { DomainHead } from '../domain.ts';
import { NOTIFY_FLAGS } from './notify-flags.ts';

/** Notifications the broker sends about the fleet (incidents, agents offline), and the tool that tests its channels. */
export const notifyHead = {
  name: 'notify',
  rank: 110,
  icon: '<path d="M6 16v-5a6 6 0 0 1 12 0v5l2 2H4zM10 21h4"/>',
  brokerFlags: NOTIFY_FLAGS,
} as const satisfies DomainHead;
