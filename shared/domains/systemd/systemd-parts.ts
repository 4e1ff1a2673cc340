import type { DomainParts } from '../domain-parts.ts';
import { failedUnitsAlert } from './failed-units-alert.ts';
import { failedUnitsCheck } from './failed-units-check.ts';

/** A host's systemd units are named HOST/NAME (a grant on the host, or unit:HOST/NAME, shows one), and the doctor and alerts warn of the failed ones. */
export const systemdParts = {
  resourceTypes: {
    unit: { scope: 'host', rank: 140 },
  },
  doctor: failedUnitsCheck,
  alerts: failedUnitsAlert,
} as const satisfies DomainParts;
