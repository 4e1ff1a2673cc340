import { z } from 'zod';
import { guestRowShape } from './proxmox-actions.ts';

export type GuestRecord = z.infer<typeof guestRowShape>;

/**
 * What the agent on a Proxmox VE node reports for the broker's index: every
 * guest of its cluster as that node's API shows them. Several agents of one
 * cluster report the same guests; the broker keeps the newest report.
 */
export interface GuestInventory {
  /** The PVE cluster's name; null for a node outside any cluster. */
  cluster: string | null;
  /** The node whose API answered. */
  node: string | null;
  taken_unix_ms: number;
  guests: GuestRecord[];
}

/** The schema the broker checks a `proxmox_guests` report against before indexing it. */
export const guestInventorySchema = z.object({
  cluster: z.string().max(256).nullable(),
  node: z.string().max(256).nullable(),
  taken_unix_ms: z.number(),
  guests: z.array(guestRowShape),
}) satisfies z.ZodType<GuestInventory>;
