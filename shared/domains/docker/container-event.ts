import { z } from 'zod';

/**
 * The `container_event` report: one Docker engine event about a container, sent
 * by the agent as the engine emits it, so the broker's index shows a crash or a
 * restart without waiting for the next inventory.
 */
export const containerEventSchema = z.object({
  time_unix_ms: z.number(),
  type: z.string().max(64),
  action: z.string().max(256),
  /** The container's short id (12 hex digits). */
  id: z.string().max(256),
  name: z.string().max(512),
  image: z.string().max(1024),
  exit_code: z.number().optional(),
  attributes: z.record(z.string().max(1024), z.string().max(65_536)),
});

export type ContainerEvent = z.infer<typeof containerEventSchema>;
