import type { Domain } from '../domain.ts';
import { networkScan, wake } from './network-actions.ts';

/** Each host's local networks: what is on them, and waking machines there. */
export const networkDomain = {
  name: 'network',
  actions: [networkScan, wake],
  reports: {},
} as const satisfies Domain;
