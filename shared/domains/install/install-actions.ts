import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';

const appName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9][a-z0-9_.-]*$/)
  .describe('From install_list.');

const portShape = z.object({ host_port: z.number(), container_port: z.number(), protocol: z.enum(['tcp', 'udp']) });

const catalogApp = z.object({
  name: z.string(),
  description: z.string(),
  category: z.string(),
  image: z.string(),
  ports: z.array(portShape),
  volumes: z.array(z.object({ name: z.string(), path: z.string() })),
  source: z.enum(['builtin', 'site']).describe("site: from the agent's --app-catalog."),
  installed: z.boolean(),
});

export const installList = defineAction({
  id: 'install.list',
  tool: 'install_list',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'install',
  title: 'Installable apps',
  description: "The apps each host can install (built-in catalog plus the site's): ports, volumes, whether installed.",
  input: z.object({ category: z.string().max(40).optional() }).strict(),
  output: z.object({ apps: z.array(catalogApp), count: z.number() }),
  table: { list: 'apps', columns: ['name', 'category', 'image', 'installed', 'description'] },
  related: ['install.app', 'install.status'],
});

const installedApp = z.object({
  app: z.string(),
  container: z.string(),
  image: z.string(),
  state: z.string().describe('created, running, restarting, exited…'),
  health: z.string().nullable().describe('starting, healthy or unhealthy; null without a health check.'),
  ports: z.array(portShape),
  volumes: z.array(z.object({ name: z.string(), exists: z.boolean() })),
  installed: z.boolean().describe('false: uninstalled, its data volumes kept.'),
});

export const installStatus = defineAction({
  id: 'install.status',
  tool: 'install_status',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'install',
  title: 'Installed apps',
  description: 'Catalog apps installed on each host (state, health, ports), and uninstalled ones whose volumes remain.',
  input: z.object({ app: appName.optional() }).strict(),
  output: z.object({ apps: z.array(installedApp), count: z.number() }),
  table: { list: 'apps', columns: ['app', 'state', 'health', 'installed'] },
});

/** How long an install may take by design: the pull of a missing image (up to 5 minutes), then the wait for its health check (default 60 s). */
const installWaitS = (params: { timeout_s?: number | undefined }) => (300 + (params.timeout_s ?? 60)) * 1000;

export const installApp = defineAction({
  id: 'install.app',
  tool: 'install_app',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'install',
  title: 'Install an app',
  description:
    "Runs a catalog app as a container with a volume per data path, until healthy, pulling its image if missing (host's registry login). A refusal (port taken, pull failed) is status failed with issues.",
  input: z
    .object({
      app: appName,
      port: z.number().int().min(1).max(65_535).optional().describe("Host port for the app's first port."),
      timeout_s: z.number().int().min(5).max(600).optional().describe('Health wait, default 60'),
    })
    .strict(),
  output: z.object({
    app: z.string(),
    status: z.enum(['installed', 'already_installed', 'failed']),
    container: z.string(),
    image: z.string(),
    ports: z.array(portShape),
    volumes: z.array(z.string()),
    health: z.string().nullable(),
    issues: z.array(z.string()),
    duration_ms: z.number(),
  }),
  table: { columns: ['app', 'status', 'health', 'issues'] },
  waitsMs: installWaitS,
  related: ['install.status', 'install.uninstall'],
});

export const installUninstall = defineAction({
  id: 'install.uninstall',
  tool: 'install_uninstall',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'install',
  title: 'Uninstall an app',
  description: "Removes an installed app's container, keeping its data volumes for a later install_app.",
  input: z.object({ app: appName }).strict(),
  output: z.object({
    app: z.string(),
    status: z.enum(['uninstalled', 'not_installed']),
    container_removed: z.boolean(),
    volumes_kept: z.array(z.string()),
  }),
  idempotent: true,
  table: { columns: ['app', 'status', 'volumes_kept'] },
  related: ['install.purge'],
});

export const installPurge = defineAction({
  id: 'install.purge',
  tool: 'install_purge',
  risk: 'destructive',
  level: 2,
  runsOn: 'host',
  collector: 'install',
  title: 'Purge an app',
  description: "Removes an app's container and deletes its data volumes (backup_create first to keep a copy).",
  input: z.object({ app: appName }).strict(),
  output: z.object({
    app: z.string(),
    status: z.enum(['purged', 'not_installed']),
    container_removed: z.boolean(),
    volumes_removed: z.array(z.string()),
  }),
  idempotent: true,
  table: { columns: ['app', 'status', 'volumes_removed'] },
  related: ['backup.create'],
});
