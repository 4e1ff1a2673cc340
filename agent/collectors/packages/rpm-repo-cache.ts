import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { compareRpmVersions } from '../../../shared/domains/packages/rpm-version.ts';
import { zlib } from '../../lazy-builtins.ts';
import type { InstalledPackage } from './installed-package.ts';
import type { PendingUpdate, UpdateMetadata } from './update-metadata.ts';
import { xmlElements } from './xml-elements.ts';

/** Where dnf (4 and 5) and yum keep each repository's metadata after `makecache`. */
const CACHE_DIRS = ['var/cache/dnf', 'var/cache/libdnf5', 'var/cache/yum'];
/** yum's cache is `<arch>/<release>/<repo>/repomd.xml`; dnf's `<repo>-<hash>/repodata/repomd.xml`. */
const MAX_DEPTH = 4;

/** A repository's metadata in the cache: its repomd.xml and the files it names by type. */
interface CachedRepo {
  repomd: string;
  files: Map<string, string>;
}

/** An rpm's [epoch:]version-release, as rpm prints an installed one (no epoch when it is 0). */
function evr(epoch: string | undefined, version: string, release: string): string {
  return `${epoch && epoch !== '0' ? `${epoch}:` : ''}${version}-${release}`;
}

function attribute(tag: string, name: string): string | undefined {
  return new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
}

/** The repomd.xml files under the cache folders, and the metadata files each names that are there. */
async function cachedRepos(root: string): Promise<CachedRepo[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isFile() && entry.name === 'repomd.xml') found.push(join(dir, entry.name));
      else if (entry.isDirectory() && depth < MAX_DEPTH) await walk(join(dir, entry.name), depth + 1);
    }
  };
  for (const dir of CACHE_DIRS) await walk(join(root, dir), 0);
  const repos: CachedRepo[] = [];
  for (const repomd of found) {
    const text = await readFile(repomd, 'utf8').catch(() => '');
    const files = new Map<string, string>();
    for (const [, type, body] of text.matchAll(/<data\s+type="([^"]+)"\s*>([\s\S]*?)<\/data>/g)) {
      const href = /<location\s[^>]*href="([^"]+)"/.exec(body ?? '')?.[1];
      if (!type || !href) continue;
      // dnf keeps the repository's layout (repodata/ beside repomd.xml's folder); yum keeps the files beside repomd.xml.
      const here = dirname(repomd);
      for (const path of [join(dirname(here), href), join(here, basename(href))]) {
        if (
          await stat(path)
            .then((s) => s.isFile())
            .catch(() => false)
        ) {
          files.set(type, path);
          break;
        }
      }
    }
    repos.push({ repomd, files });
  }
  return repos;
}

/** zstd, which Fedora's repositories use, is in Node from 22.15 (the agent's image runs 24). */
const createZstdDecompress = (zlib as { createZstdDecompress?: () => NodeJS.ReadWriteStream }).createZstdDecompress;

/** A metadata file's text as it streams, decompressed; undefined for a compression this Node cannot read. */
function opened(path: string): Readable | undefined {
  if (path.endsWith('.xml')) return createReadStream(path);
  if (path.endsWith('.gz')) return createReadStream(path).pipe(zlib().createGunzip());
  if (path.endsWith('.zst') && createZstdDecompress) return createReadStream(path).pipe(createZstdDecompress()) as unknown as Readable;
  return undefined;
}

/** Whether a candidate of one architecture replaces an installed package of another (noarch goes either way). */
function sameArch(installed: string | null, candidate: string): boolean {
  return installed === null || installed === candidate || installed === 'noarch' || candidate === 'noarch';
}

/**
 * The upgradable packages of an rpm host from the metadata dnf or yum cached
 * for each repository (repomd.xml, primary.xml, updateinfo.xml, as the host's
 * last `dnf makecache` left them): for each installed package, the highest
 * version the repositories offer for its architecture (or noarch) by rpm's
 * ordering, when it is higher than the installed one; security when an
 * updateinfo advisory of type security names a version of it above the
 * installed one and not above the candidate. Modules, excludes and versionlock
 * are dnf's policy and are not applied; nothing is fetched.
 */
export async function readRpmRepoCache(root: string, installed: readonly InstalledPackage[]): Promise<UpdateMetadata> {
  const byName = new Map<string, InstalledPackage[]>();
  for (const pkg of installed) byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg]);
  const best = new Map<string, { pkg: InstalledPackage; candidate: string }>();
  const advisories = new Map<string, string[]>();
  let refreshed = 0;
  let sources = 0;
  let securityMarked = false;
  const unreadable: UpdateMetadata['unreadable'] = [];
  const damaged = (path: string) => unreadable.push({ path, why: 'a compression this agent lacks, or a damaged file' });
  for (const repo of await cachedRepos(root)) {
    const primary = repo.files.get('primary');
    const stream = primary ? opened(primary) : undefined;
    if (!stream) {
      unreadable.push(
        primary
          ? { path: primary, why: 'a compression this agent lacks (it reads gzip, and zstd from Node 22.15)' }
          : // yum before dnf (EL 7) keeps only the sqlite form of a repository's packages.
            { path: repo.repomd, why: "its repository's package list is not there as primary.xml (yum's sqlite form is not read)" },
      );
      continue;
    }
    refreshed = Math.max(refreshed, (await stat(repo.repomd)).mtimeMs);
    const read = await xmlElements(stream, 'package', (element) => {
      const name = /<name>([^<]*)<\/name>/.exec(element)?.[1];
      const arch = /<arch>([^<]*)<\/arch>/.exec(element)?.[1];
      const version = /<version\s[^>]*>/.exec(element)?.[0];
      if (!name || !arch || !version || arch === 'src') return;
      const offered = evr(attribute(version, 'epoch'), attribute(version, 'ver') ?? '', attribute(version, 'rel') ?? '');
      for (const pkg of byName.get(name) ?? []) {
        if (!sameArch(pkg.architecture, arch) || compareRpmVersions(offered, pkg.version) <= 0) continue;
        const key = `${pkg.name}:${pkg.architecture ?? ''}`;
        const known = best.get(key);
        if (!known || compareRpmVersions(offered, known.candidate) > 0) best.set(key, { pkg, candidate: offered });
      }
    }).then(
      () => true,
      () => false,
    );
    // A file damaged partway counts as unread; what it gave before is kept.
    if (!read) damaged(primary as string);
    else sources += 1;
    const updateinfo = repo.files.get('updateinfo');
    const notes = updateinfo ? opened(updateinfo) : undefined;
    if (updateinfo && !notes) damaged(updateinfo);
    if (!notes) continue;
    const marked = await xmlElements(notes, 'update', (element) => {
      if (attribute(/<update\s[^>]*>/.exec(element)?.[0] ?? '', 'type') !== 'security') return;
      for (const [tag] of element.matchAll(/<package\s[^>]*>/g)) {
        const name = attribute(tag, 'name');
        if (!name || !byName.has(name)) continue;
        const fixed = evr(attribute(tag, 'epoch'), attribute(tag, 'version') ?? '', attribute(tag, 'release') ?? '');
        advisories.set(name, [...(advisories.get(name) ?? []), fixed]);
      }
    }).then(
      () => true,
      () => false,
    );
    if (marked) securityMarked = true;
    else damaged(updateinfo as string);
  }
  const updates = [...best.values()]
    .map(({ pkg, candidate }): PendingUpdate => {
      const fixes = advisories.get(pkg.name) ?? [];
      const security = fixes.some((fixed) => compareRpmVersions(fixed, pkg.version) > 0 && compareRpmVersions(fixed, candidate) <= 0);
      return { name: pkg.name, installed: pkg.version, candidate, security, architecture: pkg.architecture };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    updates,
    refreshedUnixMs: refreshed ? Math.floor(refreshed) : null,
    sources,
    securityMarked,
    lookedIn: `dnf's and yum's cached repository metadata (repodata/repomd.xml) under ${CACHE_DIRS.map((dir) => join(root, dir)).join(', ')}`,
    refresh: 'dnf makecache (or yum makecache)',
    unreadable,
  };
}
