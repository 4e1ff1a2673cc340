import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { packageList, packageUpdates } from '../../../shared/domains/packages/package-actions.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { PackagesCollector } from './packages-collector.ts';

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
    const updates = await calls.call(packageUpdates, {});
    expect(updates.errors[0]?.code).toBe('unsupported');
  });

  it('reads an rpm database that rpm wrote, with its epochs, in rpm’s order', async () => {
    const calls = collectorAt(join(FIXTURES, 'rpm'));
    const answer = await calls.call(packageList, {});
    expect(answer.errors).toEqual([]);
    expect(answer.payload?.ecosystem).toBe('rpm');
    expect(answer.payload?.packages).toEqual([
      { name: 'bash', version: '5.1.8-9.el9', architecture: 'x86_64' },
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
