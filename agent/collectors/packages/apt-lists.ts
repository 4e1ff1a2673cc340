import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { compareDpkgVersions } from '../../../shared/domains/packages/dpkg-version.ts';
import { readStanzas } from './control-stanzas.ts';
import type { InstalledPackage } from './installed-package.ts';
import type { PendingUpdate, UpdateMetadata } from './update-metadata.ts';

/**
 * A list of a security archive: apt names each list file after its source,
 * and the Debian and Ubuntu security suites are `<release>-security`
 * (`…_debian-security_dists_bookworm-security_main_binary-amd64_Packages`).
 */
const SECURITY_LIST = /[-_]security[-_]/;

/**
 * The upgradable packages of a host from apt's own index files
 * (/var/lib/apt/lists/*_Packages, as the host's last `apt update` left them):
 * for each installed package, the highest version the lists offer for its
 * architecture (or `all`) by dpkg's ordering, when it is higher than the
 * installed one; security when a security list offers one higher. Pins and
 * phased updates are apt's policy and are not applied; nothing is fetched.
 */
export async function readAptIndex(listsDir: string, installed: readonly InstalledPackage[]): Promise<UpdateMetadata> {
  let files: string[];
  try {
    files = readdirSync(listsDir).filter((name) => name.endsWith('_Packages'));
  } catch {
    files = [];
  }
  const byKey = new Map(installed.map((pkg) => [`${pkg.name}:${pkg.architecture ?? ''}`, pkg]));
  const best = new Map<string, { version: string; security: boolean }>();
  let refreshed = 0;
  for (const file of files) {
    const path = join(listsDir, file);
    refreshed = Math.max(refreshed, statSync(path).mtimeMs);
    const security = SECURITY_LIST.test(file);
    await readStanzas(path, ['Package', 'Version', 'Architecture'], (fields) => {
      const name = fields.Package;
      const version = fields.Version;
      if (!name || !version) return;
      const pkg = byKey.get(`${name}:${fields.Architecture ?? ''}`);
      if (!pkg || compareDpkgVersions(version, pkg.version) <= 0) return;
      const key = `${name}:${fields.Architecture ?? ''}`;
      const known = best.get(key);
      best.set(key, {
        version: !known || compareDpkgVersions(version, known.version) > 0 ? version : known.version,
        security: (known?.security ?? false) || security,
      });
    });
  }
  const updates = [...best].map(([key, candidate]): PendingUpdate => {
    const pkg = byKey.get(key) as InstalledPackage;
    return { name: pkg.name, installed: pkg.version, candidate: candidate.version, security: candidate.security, architecture: pkg.architecture };
  });
  updates.sort((a, b) => a.name.localeCompare(b.name));
  return {
    updates,
    refreshedUnixMs: refreshed ? Math.floor(refreshed) : null,
    sources: files.length,
    securityMarked: true,
    lookedIn: `apt index files under ${listsDir}`,
    refresh: 'apt update',
    unreadable: [],
  };
}
