import type { DomainParts } from '../domain-parts.ts';
import { failedUnitsCheck } from './failed-units-check.ts';

/** A host's systemd units are named HOST/NAME (a grant on the host, or unit:HOST/NAME, shows one), and the doctor warns of the failed ones. */
export const systemdParts = {
  resourceTypes: {
    unit: { scope: 'host', rank: 140 },
  },
  doctor: failedUnitsCheck,
} as const satisfies DomainParts;
