import type { Domain } from '../domain.ts';
import { journalQuery, journalSearch } from './journal-actions.ts';
import { serviceList, serviceRestart, serviceStart, serviceStatus, serviceStop } from './service-actions.ts';
import { serviceInventorySchema } from './service-inventory.ts';
import { systemdHead } from './systemd-head.ts';

/** The systemd domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const systemdDomain = {
  ...systemdHead,
  actions: [journalQuery, journalSearch, serviceList, serviceStatus, serviceStart, serviceRestart, serviceStop],
  reports: { systemd_services: serviceInventorySchema },
} as const satisfies Domain;
