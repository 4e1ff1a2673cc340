import { z } from 'zod';

/** How a watched target is run: homebutler's `runner` vocabulary. */
export const RUNNERS = ['docker', 'systemd', 'pm2'] as const;
export type Runner = (typeof RUNNERS)[number];

const logLineShape = z.object({ stream: z.enum(['stdout', 'stderr']), text: z.string().max(4096) });

/**
 * One restart of a watched container, as the agent recorded it from the
 * engine's events: also the `watch_incident` report the broker notifies about.
 */
export const incidentSchema = z.object({
  id: z.string().max(64).describe('Unique per host: the container id and the start time of the run that began.'),
  container: z.string().max(512),
  container_id: z.string().max(64),
  image: z.string().max(1024),
  detected_at_unix_ms: z.number(),
  restart_count: z.number().describe("The engine's restart count of the container after this restart."),
  previous_start_unix_ms: z.number().nullable(),
  current_start_unix_ms: z.number(),
  exit_code: z.number().nullable().describe('How the previous run ended; null when the agent did not see it end.'),
  oom_killed: z.boolean(),
  health_failures: z.number().describe('Failed health checks reported during the previous run.'),
  flapping: z.boolean().describe('At least 3 restarts within 10 minutes.'),
  restarts_in_window: z.number().describe('Restarts of this container in the last 10 minutes, this one included.'),
  analysis: z.string().max(1024).describe('A short reading of the above, such as "exited with code 3; 4 restarts in 10 minutes (flapping)".'),
  logs_before: z.array(logLineShape).describe('The last lines the previous run wrote.'),
  logs_after: z.array(logLineShape).describe('The first lines the new run wrote.'),
});

export type Incident = z.infer<typeof incidentSchema>;
