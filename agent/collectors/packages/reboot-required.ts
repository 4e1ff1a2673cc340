import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ecosystem } from '../../../shared/domains/packages/version-order.ts';
import type { InstalledPackage } from './installed-package.ts';

/** The running system a reboot check compares the installed packages with. */
export interface RunningSystem {
  bootUnixMs: number | null;
  /** The running kernel's release, as `uname -r` prints it. */
  kernelRelease: string | null;
}

/**
 * The packages whose update takes effect only at the next boot on rpm systems
 * (the kernel, the C library, systemd, the firmware, the TLS and bus
 * libraries every service holds): the list dnf's needs-restarting checks.
 */
const BOOT_PACKAGES = new Set([
  'kernel',
  'kernel-core',
  'kernel-rt',
  'kernel-default',
  'glibc',
  'linux-firmware',
  'systemd',
  'udev',
  'openssl-libs',
  'gnutls',
  'dbus',
  'dbus-broker',
]);

/** The boot time and kernel release of the system the agent runs on: a container shares its host's kernel, so both are the host's. */
export async function readRunningSystem(proc = '/proc'): Promise<RunningSystem> {
  const stat = await readFile(join(proc, 'stat'), 'utf8').catch(() => '');
  const btime = /^btime (\d+)$/m.exec(stat)?.[1];
  const release = (await readFile(join(proc, 'sys/kernel/osrelease'), 'utf8').catch(() => '')).trim();
  return { bootUnixMs: btime ? Number(btime) * 1000 : null, kernelRelease: release || null };
}

/**
 * Whether the host waits for a reboot, and for which packages, as each
 * family tells it: Debian's and Ubuntu's packages create
 * /var/run/reboot-required (listing themselves in reboot-required.pkgs); on
 * an rpm system, a boot package installed after the boot; on Alpine, a
 * kernel package whose release is not the running kernel's.
 */
export async function rebootRequired(
  root: string,
  ecosystem: Ecosystem,
  installed: readonly InstalledPackage[],
  running: RunningSystem,
): Promise<{ required: boolean; packages: string[] }> {
  const flagged = await debianFlag(root);
  if (flagged) return { required: true, packages: flagged };
  const packages =
    ecosystem === 'rpm' ? updatedSinceBoot(installed, running.bootUnixMs) : ecosystem === 'apk' ? kernelsNotRunning(installed, running.kernelRelease) : [];
  return { required: packages.length > 0, packages };
}

async function debianFlag(root: string): Promise<string[] | undefined> {
  for (const dir of ['run', 'var/run'].map((dir) => join(root, dir))) {
    try {
      await readFile(join(dir, 'reboot-required'));
    } catch {
      continue;
    }
    const listed = await readFile(join(dir, 'reboot-required.pkgs'), 'utf8').catch(() => '');
    return [
      ...new Set(
        listed
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean),
      ),
    ];
  }
  return undefined;
}

function updatedSinceBoot(installed: readonly InstalledPackage[], bootUnixMs: number | null): string[] {
  if (bootUnixMs === null) return [];
  const names = installed.filter((pkg) => BOOT_PACKAGES.has(pkg.name) && (pkg.installedUnixMs ?? 0) > bootUnixMs).map((pkg) => pkg.name);
  return [...new Set(names)].sort();
}

/**
 * Alpine's kernels are packages named linux-FLAVOR whose version 6.6.58-r0
 * boots as the release 6.6.58-0-FLAVOR: a kernel package of the running
 * flavor at another release waits for a reboot.
 */
function kernelsNotRunning(installed: readonly InstalledPackage[], kernelRelease: string | null): string[] {
  if (!kernelRelease) return [];
  return installed
    .filter((pkg) => {
      const flavor = /^linux-([a-z0-9]+)$/.exec(pkg.name)?.[1];
      if (!flavor || flavor === 'firmware' || flavor === 'headers' || !kernelRelease.endsWith(`-${flavor}`)) return false;
      const release = /^(.+)-r(\d+)$/.exec(pkg.version);
      return !!release && `${release[1]}-${release[2]}-${flavor}` !== kernelRelease;
    })
    .map((pkg) => pkg.name);
}
