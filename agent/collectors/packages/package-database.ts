import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Ecosystem } from '../../../shared/domains/packages/version-order.ts';
import { readApkInstalled } from './apk-database.ts';
import { readDpkgStatus } from './dpkg-database.ts';
import type { InstalledPackage } from './installed-package.ts';
import { readRpmDatabase } from './rpm-database.ts';

/** Where each ecosystem keeps its database under a root, in the order they are looked for. */
const DATABASES: readonly { ecosystem: Ecosystem; path: string; read(path: string): Promise<InstalledPackage[]> }[] = [
  { ecosystem: 'dpkg', path: 'var/lib/dpkg/status', read: readDpkgStatus },
  { ecosystem: 'apk', path: 'lib/apk/db/installed', read: readApkInstalled },
  // rpm 4.16 and later keep it in /usr/lib/sysimage/rpm (Fedora, EL 9, SUSE), with /var/lib/rpm a link there or the older place.
  { ecosystem: 'rpm', path: 'usr/lib/sysimage/rpm/rpmdb.sqlite', read: (path) => readRpmDatabase(join(path, '..')) },
  { ecosystem: 'rpm', path: 'var/lib/rpm/rpmdb.sqlite', read: (path) => readRpmDatabase(join(path, '..')) },
  { ecosystem: 'rpm', path: 'var/lib/rpm/Packages', read: (path) => readRpmDatabase(join(path, '..')) },
  { ecosystem: 'rpm', path: 'var/lib/rpm/Packages.db', read: (path) => readRpmDatabase(join(path, '..')) },
];

/** The package database of the system under a root: which one and its file, or undefined when it has none. */
export interface PackageDatabase {
  ecosystem: Ecosystem;
  path: string;
  read(): Promise<InstalledPackage[]>;
}

export function findPackageDatabase(root: string): PackageDatabase | undefined {
  for (const database of DATABASES) {
    const path = join(root, database.path);
    if (existsSync(path)) return { ecosystem: database.ecosystem, path, read: () => database.read(path) };
  }
  return undefined;
}
