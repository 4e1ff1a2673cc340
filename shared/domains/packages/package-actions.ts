import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { ECOSYSTEMS } from './version-order.ts';

const packageShape = z.object({
  name: z.string(),
  version: z.string(),
  architecture: z.string().nullable(),
});

export const packageList = defineAction({
  id: 'packages.package_list',
  tool: 'package_list',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'packages',
  title: 'Installed packages',
  description: "Installed packages, from each host's dpkg, rpm or apk database; older_than compares in that ecosystem's version order.",
  input: z
    .object({
      name: z.string().min(1).max(128).optional().describe('Exact name, or a part of it with *.'),
      older_than: z.string().min(1).max(128).optional().describe('Only versions older than this.'),
      limit: z.number().int().min(1).max(5000).optional().describe('default 200'),
    })
    .strict(),
  output: z.object({
    ecosystem: z.enum(ECOSYSTEMS),
    packages: z.array(packageShape),
    count: z.number(),
    installed: z.number().describe('All installed packages.'),
    truncated_reason: z.string().optional(),
  }),
  resources: { kind: 'package', lists: [{ field: 'packages', name: 'name', count: 'count' }] },
  table: { list: 'packages', columns: ['name', 'version', 'architecture'] },
  related: ['packages.package_updates'],
});

export const packageUpdates = defineAction({
  id: 'packages.package_updates',
  tool: 'package_updates',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'packages',
  title: 'Pending updates',
  description: 'Upgradable packages from the index files each host has (no download), security marked; reboot needed; metadata age.',
  input: z
    .object({
      name: z.string().min(1).max(128).optional().describe('Exact name, or a part of it with *.'),
      security: z.boolean().optional().describe('true: security updates only.'),
    })
    .strict(),
  output: z.object({
    ecosystem: z.enum(ECOSYSTEMS),
    updates: z.array(
      z.object({
        name: z.string(),
        installed: z.string(),
        candidate: z.string(),
        security: z.boolean(),
        architecture: z.string().nullable(),
      }),
    ),
    count: z.number(),
    security_count: z.number(),
    security_marked: z.boolean().describe("Whether the host's metadata marks security updates: apk's never does, rpm's with updateinfo."),
    reboot_required: z.boolean(),
    reboot_packages: z.array(z.string()).describe('The packages that asked for it.'),
    metadata_unix_ms: z
      .number()
      .nullable()
      .describe('When the package manager last refreshed its metadata (apt update, dnf makecache, apk update); null when it holds none.'),
    metadata_age_s: z.number().nullable(),
  }),
  table: { list: 'updates', columns: ['name', 'installed', 'candidate', 'security'] },
  related: ['packages.package_list'],
});
