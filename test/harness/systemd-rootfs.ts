import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * What the systemd host of the tests is built from: Debian's packages, as
 * mmdebstrap installs them (no recommends). openssl gives the package tests a
 * library every fleet asks about; the rest is what systemd as PID 1 with a
 * system bus needs.
 */
export const ROOTFS_PACKAGES = ['systemd', 'systemd-sysv', 'dbus', 'openssl'];

/** The tag the image gets in the tests' private engine. */
const IMAGE_REPOSITORY = 'fleetmesh-test/systemd';

/** A stale lock (a run killed while building) is taken over after this long. */
const LOCK_STALE_MS = 10 * 60_000;

/** The Debian release and mirror apt uses on this machine: the rootfs comes from the same archive. */
export function aptSource(): { suite: string; mirror: string } {
  const release = readFileSync('/etc/os-release', 'utf8');
  const suite = /^VERSION_CODENAME=(\S+)$/m.exec(release)?.[1];
  if (!suite) throw new Error('/etc/os-release names no VERSION_CODENAME: the systemd host is built from a Debian release');
  const files = [
    '/etc/apt/sources.list',
    ...(existsSync('/etc/apt/sources.list.d') ? readdirSync('/etc/apt/sources.list.d').map((f) => join('/etc/apt/sources.list.d', f)) : []),
  ];
  for (const file of files.filter((f) => /\.(list|sources)$/.test(f) && existsSync(f))) {
    const text = readFileSync(file, 'utf8');
    // deb822 (.sources): a stanza with URIs and Suites naming the release itself.
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1];
      const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? [];
      if (uri && suites.includes(suite) && /^Types:.*\bdeb\b/m.test(stanza)) return { suite, mirror: uri };
    }
    // One-line style: deb [options] URI SUITE COMPONENTS.
    for (const line of text.split('\n')) {
      const match = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line.trim());
      if (match && match[2] === suite) return { suite, mirror: match[1] as string };
    }
  }
  throw new Error(`no apt source for ${suite} in /etc/apt/sources.list*: the systemd host is built from the archive apt uses`);
}

function cacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'fleetmesh-ci', 'systemd-rootfs');
}

async function withLock<T>(lock: string, work: () => Promise<T>): Promise<T> {
  const until = Date.now() + LOCK_STALE_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS || Date.now() > until) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The rootfs tarball, built once with mmdebstrap and kept in the CI cache,
 * keyed by the release, mirror and package list (.ci/run caches Node 24 the
 * same way). A first build takes about a minute and 190 MB.
 */
export async function systemdRootfs(): Promise<string> {
  const { suite, mirror } = aptSource();
  const key = createHash('sha256')
    .update(JSON.stringify({ suite, mirror, packages: ROOTFS_PACKAGES, variant: 'apt' }))
    .digest('hex')
    .slice(0, 16);
  const dir = cacheDir();
  const tarball = join(dir, `${suite}-${key}.tar`);
  if (existsSync(tarball)) return tarball;
  mkdirSync(dir, { recursive: true });
  return withLock(`${tarball}.lock`, async () => {
    if (existsSync(tarball)) return tarball;
    try {
      execFileSync('mmdebstrap', ['--version'], { stdio: 'ignore' });
    } catch {
      throw new Error('mmdebstrap is missing: the systemd tests build their host with it (apt-get install -y mmdebstrap; scripts/test-packages.sh does)');
    }
    const partial = `${tarball}.partial`;
    await new Promise<void>((resolve, reject) => {
      const child = spawn('mmdebstrap', ['--variant=apt', `--include=${ROOTFS_PACKAGES.join(',')}`, '--format=tar', suite, partial, mirror], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4000);
      });
      child.once('error', reject);
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`mmdebstrap failed (${code}):\n${stderr}`))));
    });
    renameSync(partial, tarball);
    return tarball;
  });
}

/** The systemd host's image in an engine (`DOCKER_HOST`), imported from the cached rootfs when the engine lacks it. */
export async function systemdImage(dockerHost: string): Promise<string> {
  const tarball = await systemdRootfs();
  const image = `${IMAGE_REPOSITORY}:${tarball.slice(tarball.lastIndexOf('-') + 1, -'.tar'.length)}`;
  const env = { ...process.env, DOCKER_HOST: dockerHost };
  try {
    execFileSync('docker', ['image', 'inspect', image], { env, stdio: 'ignore' });
  } catch {
    execFileSync('docker', ['import', '-c', 'ENV container=docker', '-c', 'CMD ["/sbin/init"]', tarball, image], { env, stdio: 'ignore' });
  }
  return image;
}
