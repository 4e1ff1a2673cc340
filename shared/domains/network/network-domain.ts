import type { Domain } from '../domain.ts';
import { networkScan, wake } from './network-actions.ts';
import { WAKE_FLAGS } from './wake-flags.ts';

/** Each host's local networks: what is on them, and waking machines there. */
export const networkDomain = {
  name: 'network',
  rank: 100,
  icon: '<circle cx="12" cy="12" r="9"/><path d="M3 12h18M12 3c3 3 3 15 0 18M12 3c-3 3-3 15 0 18"/>',
  actions: [networkScan, wake],
  reports: {},
  brokerFlags: WAKE_FLAGS,
  flags: {
    'scan-reverse-dns': {
      type: 'boolean',
      description: "ask the system's DNS resolver for the names of devices network_scan finds (multicast DNS asks only the devices)",
      default: true,
    },
  },
} as const satisfies Domain;
