import { readFile } from 'node:fs/promises';
import type { InstalledPackage } from './installed-package.ts';

/**
 * The packages in apk's installed database (/lib/apk/db/installed): a record
 * per package, a blank line between, each line a one-letter field (`P:` the
 * name, `V:` the version, `A:` the architecture; the files' lines are skipped).
 */
export async function readApkInstalled(path: string): Promise<InstalledPackage[]> {
  const packages: InstalledPackage[] = [];
  for (const record of (await readFile(path, 'utf8')).split(/\n\s*\n/)) {
    const field = (letter: string) => new RegExp(`^${letter}:(.*)$`, 'm').exec(record)?.[1]?.trim();
    const name = field('P');
    const version = field('V');
    if (name && version) packages.push({ name, version, architecture: field('A') ?? null });
  }
  return packages;
}
