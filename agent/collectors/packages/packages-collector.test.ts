import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { packageList, packageUpdates } from '../../../shared/domains/packages/package-actions.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { PackagesCollector } from './packages-collector.ts';
import { readRpmDatabase } from './rpm-database.ts';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/packages/', import.meta.url));

/** A dpkg status file as dpkg writes one: an installed package, one removed with its configuration kept, a foreign architecture. */
const DPKG_STATUS = `Package: openssl
Status: install ok installed
Priority: optional
Architecture: amd64
Version: 3.0.11-1~deb12u2
Description: Secure Sockets Layer toolkit
 a continuation line: Version: 9.9.9

Package: old-tool
Status: deinstall ok config-files
Architecture: amd64
Version: 1.0-1

Package: libc6
Status: install ok installed
Architecture: i386
Version: 2.36-9+deb12u4

Package: tzdata
Status: install ok installed
Architecture: all
Version: 2024a-0+deb12u1
`;

const packagesList = (entries: [string, string, string][]) =>
  `${entries.map(([name, version, arch]) => `Package: ${name}\nVersion: ${version}\nArchitecture: ${arch}\nDescription: x\n`).join('\n')}`;

describe('the packages collector reads the host’s own package database', () => {
  const stops: (() => unknown)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  function collectorAt(root: string) {
    const calls = new CollectorCalls((context) => new PackagesCollector({ hostRoot: root }, context.hooks.report), {} as EngineClient);
    stops.push(() => calls.stop());
    return calls;
  }

  function dpkgRoot() {
    const temp = makeTempDir('fm-dpkg-');
    stops.push(() => temp.remove());
    const lists = join(temp.path, 'var/lib/apt/lists');
    mkdirSync(join(temp.path, 'var/lib/dpkg'), { recursive: true });
    mkdirSync(lists, { recursive: true });
    mkdirSync(join(temp.path, 'run'));
    writeFileSync(join(temp.path, 'var/lib/dpkg/status'), DPKG_STATUS);
    const main = join(lists, 'deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages');
    writeFileSync(
      main,
      packagesList([
        ['openssl', '3.0.11-1~deb12u2', 'amd64'],
        ['openssl', '3.0.13-1~deb12u1', 'amd64'],
        ['tzdata', '2024a-0+deb12u1', 'all'],
        ['libc6', '2.36-9+deb12u9', 'amd64'],
      ]),
    );
    writeFileSync(
      join(lists, 'deb.debian.org_debian-security_dists_bookworm-security_main_binary-amd64_Packages'),
      packagesList([['openssl', '3.0.15-1~deb12u1', 'amd64']]),
    );
    const day = Date.now() / 1000 - 86_400;
    utimesSync(main, day, day);
    utimesSync(join(lists, 'deb.debian.org_debian-security_dists_bookworm-security_main_binary-amd64_Packages'), day, day);
    writeFileSync(join(temp.path, 'run/reboot-required'), '*** System restart required ***\n');
    writeFileSync(join(temp.path, 'run/reboot-required.pkgs'), 'libc6\nlinux-image-amd64\nlibc6\n');
    return temp.path;
  }

  it('lists dpkg’s installed packages, leaving out removed ones, and filters by name and by an older version in dpkg’s order', async () => {
    const calls = collectorAt(dpkgRoot());
    const all = await calls.call(packageList, {});
    expect(all.payload).toMatchObject({ ecosystem: 'dpkg', count: 3, installed: 3 });
    expect(all.payload?.packages.map((pkg) => [pkg.name, pkg.version, pkg.architecture])).toEqual([
      ['libc6', '2.36-9+deb12u4', 'i386'],
      ['openssl', '3.0.11-1~deb12u2', 'amd64'],
      ['tzdata', '2024a-0+deb12u1', 'all'],
    ]);
    expect((await calls.call(packageList, { name: 'openssl', older_than: '3.0.15' })).payload?.packages).toHaveLength(1);
    // 3.0.11-1~deb12u2 is newer than 3.0.11 in dpkg's order.
    expect((await calls.call(packageList, { name: 'openssl', older_than: '3.0.11' })).payload?.packages).toEqual([]);
    expect((await calls.call(packageList, { name: 'lib*' })).payload?.packages.map((pkg) => pkg.name)).toEqual(['libc6']);
  });

  it('finds the upgradable packages in apt’s lists, marks the security ones, and says a reboot is waiting and how old the lists are', async () => {
    const calls = collectorAt(dpkgRoot());
    const answer = await calls.call(packageUpdates, {});
    expect(answer.errors).toEqual([]);
    expect(answer.payload).toMatchObject({
      ecosystem: 'dpkg',
      // libc6 is installed for i386: the amd64 list's newer one is another package.
      updates: [{ name: 'openssl', installed: '3.0.11-1~deb12u2', candidate: '3.0.15-1~deb12u1', security: true, architecture: 'amd64' }],
      count: 1,
      security_count: 1,
      reboot_required: true,
      reboot_packages: ['libc6', 'linux-image-amd64'],
    });
    expect(answer.payload?.metadata_age_s).toBeGreaterThanOrEqual(86_399);
  });

  it('reads an apk installed database that apk wrote', async () => {
    const calls = collectorAt(join(FIXTURES, 'apk'));
    const answer = await calls.call(packageList, {});
    expect(answer.payload).toMatchObject({ ecosystem: 'apk', installed: 5 });
    expect(answer.payload?.packages).toContainEqual({ name: 'libssl1.1', version: '1.1.1k-r0', architecture: 'armv7' });
    const old = await calls.call(packageList, { name: 'lib*', older_than: '1.1.1l-r0' });
    expect(old.payload?.packages.map((pkg) => pkg.name)).toEqual(['libc-utils', 'libssl1.1']);
    // The same version is not older; a letter makes 1.1.1k newer than 1.1.1.
    expect((await calls.call(packageList, { name: 'libssl*', older_than: '1.1.1k-r0' })).payload?.packages).toEqual([]);
    expect((await calls.call(packageList, { name: 'libssl*', older_than: '1.1.1' })).payload?.packages).toEqual([]);
  });

  it('finds the upgradable packages of an apk host in the indexes apk cached, in apk’s order, and says the index marks no security update', async () => {
    const calls = collectorAt(join(FIXTURES, 'apk'));
    const answer = await calls.call(packageUpdates, {});
    expect(answer.errors).toEqual([]);
    expect(answer.payload).toMatchObject({
      ecosystem: 'apk',
      // libssl1.1 and libc-utils are in no index; openssl is offered but not installed.
      updates: [
        { name: 'apk-tools', installed: '2.12.6-r0', candidate: '3.0.3-r1', security: false, architecture: 'armv7' },
        { name: 'musl', installed: '1.2.2-r3', candidate: '1.2.5-r21', security: false, architecture: 'armv7' },
        { name: 'zlib', installed: '1.2.11-r3', candidate: '1.3.1-r2', security: false, architecture: 'armv7' },
      ],
      count: 3,
      security_count: 0,
      security_marked: false,
    });
    const index = statSync(join(FIXTURES, 'apk/var/cache/apk/APKINDEX.5f2b7a1e.tar.gz'));
    expect(answer.payload?.metadata_unix_ms).toBe(Math.floor(index.mtimeMs));
    expect(answer.payload?.metadata_age_s).toEqual(expect.any(Number));
  });

  it('finds the upgradable packages of an rpm host in the repodata dnf cached, in rpm’s order with epochs, security marked from updateinfo', async () => {
    const calls = collectorAt(join(FIXTURES, 'rpm'));
    const answer = await calls.call(packageUpdates, {});
    expect(answer.errors).toEqual([]);
    expect(answer.payload).toMatchObject({
      ecosystem: 'rpm',
      // bash is offered at its installed version, nginx is not installed.
      updates: [
        { name: 'openssl', installed: '1:3.0.7-27.el9', candidate: '1:3.0.7-29.el9', security: true, architecture: 'x86_64' },
        { name: 'tzdata', installed: '2024a-1.el9', candidate: '2024b-2.el9', security: false, architecture: 'x86_64' },
      ],
      count: 2,
      security_count: 1,
      security_marked: true,
    });
    const repomd = statSync(join(FIXTURES, 'rpm/var/cache/dnf/fm-baseos-6f1d3c2a9b8e4d70/repodata/repomd.xml'));
    expect(answer.payload?.metadata_unix_ms).toBe(Math.floor(repomd.mtimeMs));
    expect((await calls.call(packageUpdates, { security: true })).payload?.updates.map((update) => update.name)).toEqual(['openssl']);
  });

  it('says an rpm host waits for a reboot when a boot package was installed after the boot, as dnf needs-restarting does', async () => {
    // The fixture's kernel-core went in when make-rpmdb.sh wrote the database.
    const [kernel] = await readRpmDatabase(join(FIXTURES, 'rpm/usr/lib/sysimage/rpm')).then((all) => all.filter((pkg) => pkg.name === 'kernel-core'));
    const installedAt = kernel?.installedUnixMs as number;
    expect(installedAt).toBeGreaterThan(Date.UTC(2024, 0, 1));
    const bootedAt = async (bootUnixMs: number) => {
      const calls = new CollectorCalls(
        (context) => new PackagesCollector({ hostRoot: join(FIXTURES, 'rpm') }, context.hooks.report, async () => ({ bootUnixMs, kernelRelease: null })),
        {} as EngineClient,
      );
      stops.push(() => calls.stop());
      return (await calls.call(packageUpdates, {})).payload;
    };
    expect(await bootedAt(installedAt - 60_000)).toMatchObject({ reboot_required: true, reboot_packages: ['kernel-core'] });
    expect(await bootedAt(installedAt + 60_000)).toMatchObject({ reboot_required: false, reboot_packages: [] });
  });

  it('names a cached metadata file it cannot read rather than answer as if it held no update', async () => {
    const temp = makeTempDir('fm-rpm-damaged-');
    stops.push(() => temp.remove());
    cpSync(join(FIXTURES, 'rpm'), temp.path, { recursive: true });
    const repodata = join(temp.path, 'var/cache/dnf/fm-baseos-6f1d3c2a9b8e4d70/repodata');
    const primary = readdirSync(repodata).find((name) => name.endsWith('-primary.xml.gz')) as string;
    writeFileSync(join(repodata, primary), readFileSync(join(repodata, primary)).subarray(0, 40));
    const answer = await collectorAt(temp.path).call(packageUpdates, {});
    expect(answer.errors).toEqual([expect.objectContaining({ code: 'unsupported', message: expect.stringContaining(primary) })]);
    // A repository whose package list is not there as primary.xml (yum's cache on EL 7 keeps the sqlite form) is named too.
    rmSync(join(repodata, primary));
    const yum = await collectorAt(temp.path).call(packageUpdates, {});
    expect(yum.errors).toEqual([expect.objectContaining({ code: 'unsupported', message: expect.stringContaining('is not there as primary.xml') })]);
  });

  it('says when an rpm or apk host holds no metadata to know an update from, and what refreshes it', async () => {
    for (const [ecosystem, database, refresh] of [
      ['rpm', 'rpm/usr/lib/sysimage/rpm', 'dnf makecache'],
      ['apk', 'apk/lib/apk/db', 'apk update'],
    ] as const) {
      const temp = makeTempDir(`fm-${ecosystem}-bare-`);
      stops.push(() => temp.remove());
      // The fixture's database alone, without the cached metadata beside it.
      cpSync(join(FIXTURES, database), join(temp.path, database.replace(/^(rpm|apk)\//, '')), { recursive: true });
      const answer = await collectorAt(temp.path).call(packageUpdates, {});
      expect(answer.payload).toMatchObject({ ecosystem, updates: [], count: 0, metadata_unix_ms: null, metadata_age_s: null });
      expect(answer.errors).toEqual([expect.objectContaining({ code: 'not_found', hint: expect.stringContaining(refresh) })]);
    }
  });

  it('reads an rpm database that rpm wrote, with its epochs, in rpm’s order', async () => {
    const calls = collectorAt(join(FIXTURES, 'rpm'));
    const answer = await calls.call(packageList, {});
    expect(answer.errors).toEqual([]);
    expect(answer.payload?.ecosystem).toBe('rpm');
    expect(answer.payload?.packages).toEqual([
      { name: 'bash', version: '5.1.8-9.el9', architecture: 'x86_64' },
      { name: 'kernel-core', version: '5.14.0-427.13.1.el9_4', architecture: 'x86_64' },
      { name: 'openssl', version: '1:3.0.7-27.el9', architecture: 'x86_64' },
      { name: 'tzdata', version: '2024a-1.el9', architecture: 'x86_64' },
    ]);
    // The epoch makes 1:3.0.7 newer than any 3.x without one.
    expect((await calls.call(packageList, { name: 'openssl', older_than: '3.0.15' })).payload?.packages).toEqual([]);
    expect((await calls.call(packageList, { name: 'openssl', older_than: '1:3.0.15' })).payload?.packages).toHaveLength(1);
  });

  it('reports the installed packages when the broker connects, and says when a root holds no package database', async () => {
    const calls = collectorAt(dpkgRoot());
    calls.collector.onConnected();
    await expect.poll(() => calls.reportsOf('packages_installed').length).toBe(1);
    expect(calls.reportsOf<{ ecosystem: string; packages: unknown[] }>('packages_installed')[0]).toMatchObject({ ecosystem: 'dpkg' });
    const empty = makeTempDir('fm-nopkg-');
    stops.push(() => empty.remove());
    const none = collectorAt(empty.path);
    expect(await none.collector.probe()).toMatchObject({ available: false, reason: expect.stringContaining('no dpkg, rpm or apk package database') });
  });
});
