import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compareApkVersions } from '../../../shared/domains/packages/apk-version.ts';
import { zlib } from '../../lazy-builtins.ts';
import type { InstalledPackage } from './installed-package.ts';
import { tarFile } from './tar-file.ts';
import type { PendingUpdate, UpdateMetadata } from './update-metadata.ts';

const gunzipAsync = (data: Buffer) => promisify(zlib().gunzip)(data);

/** Where apk keeps the indexes it fetched (`apk update`): its cache, or the cache folder /etc/apk/cache links to. */
const CACHE_DIRS = ['var/cache/apk', 'etc/apk/cache'];

/**
 * The upgradable packages of an Alpine host from the indexes apk cached
 * (`APKINDEX.<hash>.tar.gz`, one per repository, as `apk update` left them):
 * for each installed package, the highest version an index offers under its
 * name by apk's ordering, when it is higher than the installed one. apk's
 * indexes say nothing of security (Alpine keeps its fixes in the ports'
 * build files), so no update is marked. Nothing is fetched.
 */
export async function readApkIndexCache(root: string, installed: readonly InstalledPackage[]): Promise<UpdateMetadata> {
  const byName = new Map(installed.map((pkg) => [pkg.name, pkg]));
  const best = new Map<string, string>();
  const seen = new Set<string>();
  let refreshed = 0;
  let sources = 0;
  const unreadable: UpdateMetadata['unreadable'] = [];
  for (const dir of CACHE_DIRS.map((folder) => join(root, folder))) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names.filter((file) => /^APKINDEX\..+\.tar\.gz$/.test(file))) {
      const path = join(dir, name);
      const info = await stat(path);
      // /etc/apk/cache is usually a link to /var/cache/apk: each index once.
      const key = `${info.dev}:${info.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const index = await readFile(path)
        .then((gz) => gunzipAsync(gz))
        .then((tar) => tarFile(tar, 'APKINDEX'))
        .catch(() => undefined);
      if (!index) {
        unreadable.push({ path, why: 'not a gzipped tar holding an APKINDEX: a damaged file' });
        continue;
      }
      sources += 1;
      refreshed = Math.max(refreshed, info.mtimeMs);
      for (const record of index.toString('utf8').split(/\n\s*\n/)) {
        const name = /^P:(.*)$/m.exec(record)?.[1]?.trim();
        const version = /^V:(.*)$/m.exec(record)?.[1]?.trim();
        if (!name || !version) continue;
        const pkg = byName.get(name);
        if (!pkg || compareApkVersions(version, pkg.version) <= 0) continue;
        const known = best.get(name);
        if (!known || compareApkVersions(version, known) > 0) best.set(name, version);
      }
    }
  }
  const updates = [...best]
    .map(([name, candidate]): PendingUpdate => {
      const pkg = byName.get(name) as InstalledPackage;
      return { name, installed: pkg.version, candidate, security: false, architecture: pkg.architecture };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    updates,
    refreshedUnixMs: refreshed ? Math.floor(refreshed) : null,
    sources,
    securityMarked: false,
    lookedIn: `apk's cached indexes (APKINDEX.*.tar.gz) under ${CACHE_DIRS.map((folder) => join(root, folder)).join(' and ')}`,
    refresh: 'apk update',
    unreadable,
  };
}
