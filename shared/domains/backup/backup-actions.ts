import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';

const archiveName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/)
  .describe('As backup_list names it.');

const sourceParams = {
  container: z.string().min(1).max(256).optional().describe('Container name or id.'),
  project: z.string().min(1).max(256).optional().describe('A compose project (all its containers).'),
};

/** How long an archive or a restore may take by design, from the call's timeout_s. */
const workTimeoutS = z.number().int().min(10).max(3600).optional().describe('default 600');
const workWaitsMs = (params: { timeout_s?: number | undefined }) => (params.timeout_s ?? 600) * 1000;

const archivedVolume = z.object({
  name: z.string(),
  destination: z.string().describe('Where the source container mounts it.'),
  containers: z.array(z.string()),
});

export const backupRowShape = z.object({
  archive: z.string(),
  path: z.string(),
  source: z.string(),
  source_kind: z.enum(['container', 'project']),
  volumes: z.array(archivedVolume),
  size_bytes: z.number(),
  sha256: z.string(),
  created_unix_ms: z.number(),
});

export const backupList = defineAction({
  id: 'backup.list',
  tool: 'backup_list',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'backup',
  title: 'List backups',
  description: "The volume archives in each host's backup directory, newest first, with size and SHA-256.",
  input: z.object(sourceParams).strict(),
  output: z.object({ backup_dir: z.string(), backups: z.array(backupRowShape), count: z.number() }),
  table: { list: 'backups', columns: ['archive', 'source', 'size_bytes', 'created_unix_ms'] },
  related: ['backup.create', 'backup.drill'],
});

export const backupCreate = defineAction({
  id: 'backup.create',
  tool: 'backup_create',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'backup',
  title: 'Back up volumes',
  description:
    "Archives the named volumes of a container or compose project (tar.gz, SHA-256) into the host's backup directory while it runs; skips bind mounts.",
  input: z
    .object({
      ...sourceParams,
      to: z.string().min(1).max(512).optional().describe('A folder inside the backup directory.'),
      exclude: z.array(z.string().min(1).max(256)).max(50).optional().describe('Globs to leave out (*.log, cache).'),
      timeout_s: workTimeoutS,
    })
    .strict(),
  output: backupRowShape.extend({
    skipped_mounts: z.array(z.object({ type: z.string(), destination: z.string(), container: z.string(), reason: z.string() })),
    entries: z.number().describe('Files, directories and links archived.'),
    excluded: z.number().describe('Entries left out by exclude.'),
    duration_ms: z.number(),
  }),
  table: { columns: ['archive', 'source', 'size_bytes', 'entries', 'duration_ms'] },
  waitsMs: workWaitsMs,
  related: ['backup.list', 'backup.drill'],
});

export const backupDrill = defineAction({
  id: 'backup.drill',
  tool: 'backup_drill',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'backup',
  title: 'Rehearse a restore',
  description: 'Proves an archive restorable: checks its SHA-256, restores it into throwaway volumes, runs the app on them until healthy, then removes it all.',
  input: z
    .object({
      archive: archiveName,
      timeout_s: z.number().int().min(10).max(900).optional().describe('default 120'),
    })
    .strict(),
  output: z.object({
    archive: z.string(),
    passed: z.boolean(),
    status: z.enum(['passed', 'failed']),
    checksum_ok: z.boolean(),
    apps: z.array(
      z.object({
        container: z.string(),
        image: z.string(),
        check: z.enum(['healthcheck', 'running']).describe("healthcheck: the image's or container's own; running: none exists, it had to stay up."),
        passed: z.boolean(),
        detail: z.string(),
      }),
    ),
    timings: z.object({ verify_ms: z.number(), restore_ms: z.number(), health_ms: z.number(), cleanup_ms: z.number(), total_ms: z.number() }),
    issues: z.array(z.string()),
  }),
  table: { columns: ['archive', 'status', 'timings.restore_ms', 'timings.health_ms', 'timings.total_ms'] },
  waitsMs: (params) => (params.timeout_s ?? 120) * 1000,
  related: ['backup.list', 'backup.restore'],
});

export const backupRestore = defineAction({
  id: 'backup.restore',
  tool: 'backup_restore',
  risk: 'destructive',
  level: 2,
  runsOn: 'host',
  collector: 'backup',
  title: 'Restore volumes',
  description:
    'Writes an archive back into its volumes (files added since stay). Refused while a running container uses one, and for volumes binding a host directory.',
  input: z.object({ archive: archiveName, timeout_s: workTimeoutS }).strict(),
  output: z.object({
    archive: z.string(),
    volumes: z.array(z.object({ name: z.string(), created: z.boolean().describe('The volume did not exist and was made anew.') })),
    checksum_ok: z.boolean(),
    duration_ms: z.number(),
  }),
  table: { list: 'volumes', columns: ['name', 'created'] },
  waitsMs: workWaitsMs,
  related: ['backup.drill'],
});
