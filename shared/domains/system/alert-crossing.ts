import { z } from 'zod';

/**
 * The `alert_crossing` report: a host's CPU, memory or a disk moved from one
 * alert state to another (ok, warning, critical), sent as the agent's sampler
 * sees it, so the broker can notify without anyone asking.
 */
export const alertCrossingSchema = z.object({
  timestamp_unix_ms: z.number(),
  metric: z.enum(['cpu', 'memory', 'disk']),
  mount: z.string().max(4096).optional(),
  value_percent: z.number(),
  threshold_percent: z.number(),
  state: z.enum(['ok', 'warning', 'critical']),
});

export type AlertCrossing = z.infer<typeof alertCrossingSchema>;
