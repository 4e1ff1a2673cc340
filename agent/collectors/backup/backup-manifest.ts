import { z } from 'zod';

/** What a drill needs to start an app again on restored volumes (never its environment: that stays with the container). */
const appShape = z.object({
  container: z.string(),
  image: z.string(),
  image_id: z.string(),
  cmd: z.array(z.string()).nullable(),
  entrypoint: z.array(z.string()).nullable(),
  working_dir: z.string(),
  user: z.string(),
  healthcheck: z
    .object({ Test: z.array(z.string()).optional() })
    .passthrough()
    .nullable(),
  mounts: z.array(z.object({ volume: z.string(), destination: z.string() })),
});

/**
 * The manifest beside each archive (`NAME.json` next to `NAME.tar.gz`): the
 * archive's checksum and size, the volumes it holds (as `fleetmesh-volumes/VOLUME/…`
 * entries) and the apps that used them. Doctor and backup_list read these.
 */
export const manifestSchema = z.object({
  format: z.literal(1),
  archive: z.string(),
  file: z.string(),
  source: z.string(),
  source_kind: z.enum(['container', 'project']),
  volumes: z.array(z.object({ name: z.string(), destination: z.string(), containers: z.array(z.string()) })),
  apps: z.array(appShape),
  size_bytes: z.number(),
  sha256: z.string(),
  created_unix_ms: z.number(),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type AppRecord = z.infer<typeof appShape>;
