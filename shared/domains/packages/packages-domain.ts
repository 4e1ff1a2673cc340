import type { Domain } from '../domain.ts';
import { packageList, packageUpdates } from './package-actions.ts';
import { packageInventorySchema } from './package-inventory.ts';
import { packagesHead } from './packages-head.ts';

/** The packages domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const packagesDomain = {
  ...packagesHead,
  actions: [packageList, packageUpdates],
  reports: { packages_installed: packageInventorySchema },
} as const satisfies Domain;
