/**
 * The fleetmesh container image, built on a machine with no registry and no
 * network (DESIGN §9). A base image is imported from this machine's own node
 * binary and the shared libraries it and better-sqlite3 load (`ldd`), with
 * busybox for /bin/sh and an /etc/passwd holding the `node` user the official
 * images have. The Dockerfile's `prebuilt` target is then built on that base
 * from a staged context: package.json, bin/fleetmesh.js, a fresh dist/ and the
 * production packages of the installed node_modules (better-sqlite3 was built
 * on this machine, so it loads on these libraries).
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

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

function copyInto(rootfs: string, path: string): void {
  const target = join(rootfs, path);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(path, target);
}

/** Imports the base image (node, its libraries, busybox, a `node` user) unless the engine has it. */
export async function buildNodeBase(env: NodeJS.ProcessEnv): Promise<void> {
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
    for (const dir of ['etc', 'proc', 'sys', 'dev', 'run', 'var/lib', 'home/node']) mkdirSync(join(rootfs, dir), { recursive: true });
    mkdirSync(join(rootfs, 'tmp'));
    chmodSync(join(rootfs, 'tmp'), 0o1777);
    chownSync(join(rootfs, 'home/node'), 1000, 1000);
    writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n');
    writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
    writeFileSync(join(rootfs, 'etc/nsswitch.conf'), 'passwd: files\ngroup: files\nhosts: files dns\n');
    const tar = execFileSync('tar', ['-C', rootfs, '-c', '.'], { maxBuffer: 512 * 1024 * 1024 });
    await run('docker', ['import', '-c', 'ENV PATH=/usr/local/bin:/usr/bin:/bin', '-', NODE_BASE_IMAGE], { env, input: tar });
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

/** The installed production packages (top level only: copying one copies what is nested in it). */
async function productionPackages(): Promise<string[]> {
  const listed = (await run('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: REPO_ROOT })).split('\n');
  const nodeModules = join(REPO_ROOT, 'node_modules');
  return [
    ...new Set(
      listed
        .filter((path) => path.startsWith(`${nodeModules}/`))
        .map((path) => relative(nodeModules, path))
        .filter((name) => !name.includes('/node_modules/'))
        .map((name) =>
          name
            .split('/')
            .slice(0, name.startsWith('@') ? 2 : 1)
            .join('/'),
        ),
    ),
  ];
}

/**
 * Builds the image from the Dockerfile's `prebuilt` target on the imported base
 * and tags it `tag`. Everything staged is removed afterwards.
 */
export async function buildFleetmeshImage(tag: string, env: NodeJS.ProcessEnv): Promise<void> {
  const context = mkdtempSync(join(tmpdir(), 'fm-image-'));
  try {
    copyFileSync(join(REPO_ROOT, 'Dockerfile'), join(context, 'Dockerfile'));
    copyFileSync(join(REPO_ROOT, 'package.json'), join(context, 'package.json'));
    mkdirSync(join(context, 'bin'));
    copyFileSync(join(REPO_ROOT, 'bin/fleetmesh.js'), join(context, 'bin/fleetmesh.js'));
    await run(process.execPath, [
      join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      join(REPO_ROOT, 'tsconfig.build.json'),
      '--outDir',
      join(context, 'dist'),
    ]);
    for (const name of await productionPackages()) {
      cpSync(join(REPO_ROOT, 'node_modules', name), join(context, 'node_modules', name), { recursive: true, dereference: true });
    }
    await run('docker', ['build', '--target', 'prebuilt', '--build-arg', `BASE_IMAGE=${NODE_BASE_IMAGE}`, '-t', tag, context], {
      env: { ...env, DOCKER_BUILDKIT: '0' },
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

/** Removes images by tag, whatever uses them; missing ones are fine. */
export async function removeImages(tags: string[], env: NodeJS.ProcessEnv): Promise<void> {
  for (const tag of tags) await run('docker', ['image', 'rm', '--force', tag], { env }).catch(() => undefined);
}
