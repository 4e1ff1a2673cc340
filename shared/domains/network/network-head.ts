import type { DomainHead } from '../domain.ts';
import { WAKE_FLAGS } from './wake-flags.ts';

/** The fact in each agent's Hello naming its IPv4 subnets (`10.0.0.5/24,…`): a claim, used only to choose among agents a caller may use. */
export const NETWORKS_FACT = 'ipv4_networks';

/** A scan never lasts longer than this, whatever the deadline. */
export const SCAN_LIMIT_MS = 30_000;

/** Each host's local networks: what is on them, and waking machines there. */
export const networkHead = {
  name: 'network',
  rank: 100,
  icon: '<circle cx="12" cy="12" r="9"/><path d="M3 12h18M12 3c3 3 3 15 0 18M12 3c-3 3-3 15 0 18"/>',
  brokerFlags: WAKE_FLAGS,
  flags: {
    'scan-reverse-dns': {
      type: 'boolean',
      description: "ask the system's DNS resolver for the names of devices network_scan finds (multicast DNS asks only the devices)",
      default: true,
    },
  },
} as const satisfies DomainHead;
