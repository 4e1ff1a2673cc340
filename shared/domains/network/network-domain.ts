import type { Domain } from '../domain.ts';
import { networkScan, sendMagicPacket, wake } from './network-actions.ts';
import { networkHead } from './network-head.ts';

/** The network domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const networkDomain = {
  ...networkHead,
  actions: [networkScan, wake],
  brokerCalls: [sendMagicPacket],
  reports: {},
} as const satisfies Domain;
