import { join } from 'node:path';
import type { packageList, packageUpdates } from '../../../shared/domains/packages/package-actions.ts';
import { type Ecosystem, versionOrder } from '../../../shared/domains/packages/version-order.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { readApkIndexCache } from './apk-index-cache.ts';
import { readAptIndex } from './apt-lists.ts';
import type { InstalledPackage } from './installed-package.ts';
import { namePattern } from './name-pattern.ts';
import type { PackageDatabase } from './package-database.ts';
import { type RunningSystem, readRunningSystem, rebootRequired } from './reboot-required.ts';
import { readRpmRepoCache } from './rpm-repo-cache.ts';
import type { UpdateMetadata } from './update-metadata.ts';

/** Where each ecosystem's package manager keeps what it knows of newer versions, read as it left it. */
const UPDATE_METADATA: Record<Ecosystem, (root: string, installed: readonly InstalledPackage[]) => Promise<UpdateMetadata>> = {
  dpkg: (root, installed) => readAptIndex(join(root, 'var/lib/apt/lists'), installed),
  rpm: readRpmRepoCache,
  apk: readApkIndexCache,
};

/** package_list and package_updates over the host's package database, found under `root` by `database()`; `running` tells the boot a reboot check compares with. */
export function registerPackageActions(
  dispatcher: Dispatcher,
  root: string,
  database: () => PackageDatabase,
  running: () => Promise<RunningSystem> = readRunningSystem,
): void {
  dispatcher.register<typeof packageList>('packages.package_list', async (params) => {
    const db = database();
    const all = await db.read();
    const order = versionOrder(db.ecosystem);
    const matches = namePattern(params.name);
    const older = params.older_than;
    const selected = all
      .filter((pkg) => matches(pkg.name) && (older === undefined || order(pkg.version, older) < 0))
      .sort((a, b) => a.name.localeCompare(b.name));
    const limit = params.limit ?? 200;
    return {
      payload: {
        ecosystem: db.ecosystem,
        packages: selected.slice(0, limit).map(({ name, version, architecture }) => ({ name, version, architecture })),
        count: Math.min(selected.length, limit),
        installed: all.length,
        ...(selected.length > limit ? { truncated_reason: `${selected.length} match: the first ${limit} by name; name or a larger limit narrows it` } : {}),
      },
    };
  });

  dispatcher.register<typeof packageUpdates>('packages.package_updates', async (params) => {
    const db = database();
    const installed = await db.read();
    const metadata = await UPDATE_METADATA[db.ecosystem](root, installed);
    const matches = namePattern(params.name);
    const updates = metadata.updates.filter((update) => matches(update.name) && (!params.security || update.security));
    const reboot = await rebootRequired(root, db.ecosystem, installed, await running());
    return {
      payload: {
        ecosystem: db.ecosystem,
        updates,
        count: updates.length,
        security_count: updates.filter((update) => update.security).length,
        security_marked: metadata.securityMarked,
        reboot_required: reboot.required,
        reboot_packages: reboot.packages,
        metadata_unix_ms: metadata.refreshedUnixMs,
        metadata_age_s: metadata.refreshedUnixMs === null ? null : Math.max(0, Math.round((Date.now() - metadata.refreshedUnixMs) / 1000)),
      },
      errors: [
        ...(metadata.sources === 0 && metadata.unreadable.length === 0
          ? [
              new FleetError('not_found', `no ${metadata.lookedIn}: no update is known`, {
                hint: `An operator runs ${metadata.refresh} on the host (the agent fetches nothing).`,
              }).toInfo(),
            ]
          : []),
        ...metadata.unreadable.map(({ path, why }) =>
          new FleetError('unsupported', `the package metadata ${path} could not be read (${why}): its updates are not counted`, {
            collector: 'packages',
            hint: 'package_list with older_than still compares the installed versions with one you name.',
          }).toInfo(),
        ),
      ],
    };
  });
}
