import type { Domain } from '../domain.ts';
import { checkupHead } from './checkup-head.ts';
import { configValidate } from './config-validate-action.ts';
import { doctor } from './doctor-action.ts';
import { inventoryExport, inventoryScan } from './inventory-actions.ts';
import { report } from './report-action.ts';

/** The checkup domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const checkupDomain = {
  ...checkupHead,
  actions: [report, doctor, inventoryScan, inventoryExport, configValidate],
  reports: {},
} as const satisfies Domain;
