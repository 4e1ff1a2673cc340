/**
 * The fleetmesh container image, built on a machine with no registry and no
 * network (DESIGN §9). A base image is imported from this machine's own node
 * binary and the shared libraries it and better-sqlite3 load (`ldd`), with
 * busybox for /bin/sh, this machine's npm (the SBOM generator runs `npm ls`,
 * and the official images have npm too) and an /etc/passwd holding the `node`
 * user the official images have. The Dockerfile's `prebuilt` target is then
 * built on that base from a staged context (scripts/release/image-context.ts):
 * the production packages of the installed node_modules come along, and
 * better-sqlite3 was built on this machine, so it loads on these libraries.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildImage } from '../../scripts/release/image-build.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Tagged with the major version of the node it holds: the one running the tests. */
export const NODE_BASE_IMAGE = `fleetmesh-test/node-base:${process.versions.node.split('.')[0]}`;

/**
 * Runs a command to completion without blocking the test worker (an image
 * build takes tens of seconds); resolves with stdout, rejects with stderr.
 */
export function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; input?: Buffer; cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(stdout).toString());
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${Buffer.concat(stderr).toString().slice(-3000)}`));
    });
    child.stdin?.end(options.input);
  });
}

/** The absolute paths of the libraries a binary loads, the dynamic loader included. */
async function sharedLibraries(binary: string): Promise<string[]> {
  return (await run('ldd', [binary]))
    .split('\n')
    .map((line) => /(\/\S+) \(0x/.exec(line)?.[1])
    .filter((path): path is string => path !== undefined);
}

/** The folder of the npm package that `npm` on PATH runs. */
function npmPackageDir(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (existsSync(join(dir, 'npm'))) return dirname(dirname(realpathSync(join(dir, 'npm'))));
  }
  throw new Error('npm is not on PATH');
}

function copyInto(rootfs: string, path: string): void {
  const target = join(rootfs, path);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(path, target);
}

/** Imports the base image (node, its libraries, npm, busybox, a `node` user) as `tag`. */
export async function buildNodeBase(env: NodeJS.ProcessEnv, tag = NODE_BASE_IMAGE): Promise<void> {
  const sqlite = join(REPO_ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
  const busybox = ['/bin/busybox', '/usr/bin/busybox'].find((path) => existsSync(path));
  if (!busybox) throw new Error('busybox is missing: apt-get install -y busybox-static');
  const rootfs = mkdtempSync(join(tmpdir(), 'fm-base-'));
  try {
    mkdirSync(join(rootfs, 'usr/local/bin'), { recursive: true });
    copyFileSync(process.execPath, join(rootfs, 'usr/local/bin/node'));
    for (const library of new Set([...(await sharedLibraries(process.execPath)), ...(await sharedLibraries(sqlite))])) copyInto(rootfs, library);
    mkdirSync(join(rootfs, 'bin'));
    copyFileSync(busybox, join(rootfs, 'bin/busybox'));
    for (const applet of (await run(busybox, ['--list'])).split('\n')) {
      // Skip `busybox` itself, or the link would replace the binary.
      if (applet && applet !== 'busybox') symlinkSync('busybox', join(rootfs, 'bin', applet));
    }
    mkdirSync(join(rootfs, 'usr/bin'), { recursive: true });
    symlinkSync('/bin/busybox', join(rootfs, 'usr/bin/env'));
    cpSync(npmPackageDir(), join(rootfs, 'usr/local/lib/node_modules/npm'), { recursive: true });
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
    for (const dir of ['etc', 'proc', 'sys', 'dev', 'run', 'var/lib', 'home/node']) mkdirSync(join(rootfs, dir), { recursive: true });
    mkdirSync(join(rootfs, 'tmp'));
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    chownSync(join(rootfs, 'home/node'), 1000, 1000);
    writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n');
    writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
    writeFileSync(join(rootfs, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
    const tar = execFileSync('tar', ['-C', rootfs, '-c', '.'], { maxBuffer: 512 * 1024 * 1024 });
    await run('docker', ['import', '-c', 'ENV PATH=/usr/local/bin:/usr/bin:/bin', '-', tag], { env, input: tar });
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

/**
 * Builds the image from the Dockerfile's `prebuilt` target on the imported base
 * and tags it `tag`, as `npm run release -- --image-target prebuilt` builds it
 * (scripts/release/image-build.ts), with the package's version as its label.
 */
export async function buildFleetmeshImage(tag: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  await buildImage({ tag, target: 'prebuilt', baseImage: NODE_BASE_IMAGE, env }, version);
}

/** Removes images by tag, whatever uses them; missing ones are fine. */
export async function removeImages(tags: string[], env: NodeJS.ProcessEnv): Promise<void> {
  for (const tag of tags) await run('docker', ['image', 'rm', '--force', tag], { env }).catch(() => undefined);
}
