import { join } from 'node:path';
import { packageList, packageUpdates } from '../../../shared/domains/packages/package-actions.ts';
import { versionOrder } from '../../../shared/domains/packages/version-order.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { readAptIndex } from './apt-lists.ts';
import { namePattern } from './name-pattern.ts';
import type { PackageDatabase } from './package-database.ts';
import { rebootRequired } from './reboot-required.ts';

/** package_list and package_updates over the host's package database, found under `root` by `database()`. */
export function registerPackageActions(dispatcher: Dispatcher, root: string, database: () => PackageDatabase): void {
  dispatcher.register(packageList, async (params) => {
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
        packages: selected.slice(0, limit),
        count: Math.min(selected.length, limit),
        installed: all.length,
        ...(selected.length > limit ? { truncated_reason: `${selected.length} match: the first ${limit} by name; name or a larger limit narrows it` } : {}),
      },
    };
  });

  dispatcher.register(packageUpdates, async (params) => {
    const db = database();
    if (db.ecosystem !== 'dpkg') {
      throw new FleetError('unsupported', `pending updates are read from apt's index files; this host keeps ${db.ecosystem} packages`, {
        hint: 'package_list with older_than compares its installed versions with one you name.',
      });
    }
    const installed = await db.read();
    const index = await readAptIndex(join(root, 'var/lib/apt/lists'), installed);
    const matches = namePattern(params.name);
    const updates = index.updates.filter((update) => matches(update.name) && (!params.security || update.security));
    const reboot = await rebootRequired(root);
    return {
      payload: {
        ecosystem: db.ecosystem,
        updates,
        count: updates.length,
        security_count: updates.filter((update) => update.security).length,
        reboot_required: reboot.required,
        reboot_packages: reboot.packages,
        metadata_unix_ms: index.refreshedUnixMs,
        metadata_age_s: index.refreshedUnixMs === null ? null : Math.max(0, Math.round((Date.now() - index.refreshedUnixMs) / 1000)),
      },
      errors:
        index.lists === 0
          ? [
              new FleetError('not_found', `no apt index files under ${join(root, 'var/lib/apt/lists')}: no update is known`, {
                hint: 'An operator runs apt update on the host (the agent fetches nothing).',
              }).toInfo(),
            ]
          : [],
    };
  });
}
