import { readStanzas } from './control-stanzas.ts';
import type { InstalledPackage } from './installed-package.ts';

/**
 * The packages dpkg's status file (/var/lib/dpkg/status) says are installed:
 * a stanza whose Status ends in `installed` (a removed package keeps its
 * stanza, as `deinstall ok config-files`, until it is purged).
 */
export async function readDpkgStatus(path: string): Promise<InstalledPackage[]> {
  const packages: InstalledPackage[] = [];
  await readStanzas(path, ['Package', 'Status', 'Version', 'Architecture'], (fields) => {
    if (!fields.Package || !fields.Version || !/\sinstalled$/.test(fields.Status ?? '')) return;
    packages.push({ name: fields.Package, version: fields.Version, architecture: fields.Architecture ?? null });
  });
  return packages;
}
