import type { DomainParts } from '../domain-parts.ts';
import { pendingUpdatesCheck } from './pending-updates-check.ts';

/** A host's installed packages are named HOST/NAME (a grant on the host, or package:HOST/NAME, shows one); the doctor warns of reboots and security updates waiting. */
export const packagesParts = {
  resourceTypes: {
    package: { scope: 'host', rank: 150 },
  },
  doctor: pendingUpdatesCheck,
} as const satisfies DomainParts;
