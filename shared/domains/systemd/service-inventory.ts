import { z } from 'zod';

/**
 * The `systemd_services` report: a host's service units and their states, sent
 * when the agent connects and whenever a state changes, so the broker's index
 * finds them (find type=unit) and knows the failed ones without asking.
 */
export const serviceInventorySchema = z.object({
  units: z
    .array(
      z.object({
        name: z.string().min(1).max(256),
        description: z.string().max(1024),
        active_state: z.string().max(32),
        sub_state: z.string().max(32),
        since_unix_ms: z.number().nullable(),
      }),
    )
    .max(5000),
});

export type ServiceInventory = z.infer<typeof serviceInventorySchema>;
