import { z } from 'zod';
import { ECOSYSTEMS } from './version-order.ts';

/**
 * The `packages_installed` report: a host's installed packages, sent when the
 * agent connects and when its package database changes, so `find type=package`
 * answers from the broker's index without asking every host.
 */
export const packageInventorySchema = z.object({
  ecosystem: z.enum(ECOSYSTEMS),
  packages: z.array(z.object({ name: z.string().min(1).max(256), version: z.string().max(256), architecture: z.string().max(64).nullable() })).max(50_000),
});

export type PackageInventory = z.infer<typeof packageInventorySchema>;
