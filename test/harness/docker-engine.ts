/**
 * One private Docker engine per test run (DESIGN §9): its own data root, exec
 * root, pidfile, socket and bridge under a temporary directory, so tests never
 * touch anyone else's containers. A busybox image is imported from the host's
 * busybox-static (there is no registry). Used as vitest's global setup; tests
 * read the socket with inject('dockerHost').
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

export const TEST_IMAGE = 'fleetmesh-test/busybox:1';

declare module 'vitest' {
  export interface ProvidedContext {
    dockerHost: string;
    testImage: string;
  }
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, input?: Buffer): string {
  return execFileSync(command, args, { env, input, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 }).toString();
}

function which(binary: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin', '/usr/bin', '/bin'])) {
    if (existsSync(join(dir, binary))) return join(dir, binary);
  }
  return undefined;
}

async function waitForSocket(socket: string, log: string, child: ChildProcess): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`dockerd exited (${child.exitCode}):\n${readFileSync(log, 'utf8').slice(-3000)}`);
    try {
      run('docker', ['-H', `unix://${socket}`, 'version', '--format', '{{.Server.Version}}']);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`dockerd did not answer within 60 s:\n${readFileSync(log, 'utf8').slice(-3000)}`);
}

/**
 * A bridge of the run's own, on a subnet of its own, so two runs at once (or a
 * system engine's docker0) never hand out the same container addresses. The
 * octet also names the swarm's gateway bridge (see startPrivateEngine).
 */
function createBridge(): { name: string; octet: number } {
  for (let attempt = 0; attempt < 20; attempt++) {
    const octet = 1 + Math.floor(Math.random() * 250);
    const name = `fmt${octet}`;
    try {
      run('ip', ['link', 'show', name]);
      continue;
    } catch {
      // free: take it
    }
    run('ip', ['link', 'add', name, 'type', 'bridge']);
    run('ip', ['addr', 'add', `10.231.${octet}.1/24`, 'dev', name]);
    run('ip', ['link', 'set', name, 'up']);
    return { name, octet };
  }
  throw new Error('could not find a free bridge name for the test engine');
}

function importBusybox(root: string, env: NodeJS.ProcessEnv): void {
  const busybox = ['/bin/busybox', '/usr/bin/busybox'].find((path) => existsSync(path));
  if (!busybox) throw new Error('busybox is missing: apt-get install -y busybox-static');
  const rootfs = join(root, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  copyFileSync(busybox, join(rootfs, 'bin', 'busybox'));
  for (const applet of run(busybox, ['--list']).split('\n')) {
    // Skip `busybox` itself, or the link would replace the binary.
    if (applet && applet !== 'busybox') symlinkSync('busybox', join(rootfs, 'bin', applet));
  }
  for (const dir of ['tmp', 'etc', 'proc', 'sys', 'dev', 'run', 'var/log']) mkdirSync(join(rootfs, dir), { recursive: true });
  const tar = execFileSync('tar', ['-C', rootfs, '-c', '.'], { maxBuffer: 64 * 1024 * 1024 });
  run('docker', ['import', '-c', 'ENV PATH=/bin', '-', TEST_IMAGE], env, tar);
}

/** The kernel log's last lines about killed or crashed processes (the OOM killer among them), when it can be read. */
function kernelKills(): string {
  try {
    const lines = run('dmesg', [])
      .split('\n')
      .filter((line) => /oom|killed process|segfault|dockerd|containerd/i.test(line));
    return lines.slice(-12).join('\n') || '(none)';
  } catch {
    return '(dmesg cannot be read here)';
  }
}

/** A running private engine: where to reach it, and how to take it down with everything in it. */
export interface PrivateEngine {
  dockerHost: string;
  stop(): Promise<void>;
}

export async function startPrivateEngine(): Promise<PrivateEngine> {
  if (!which('dockerd'))
    throw new Error('dockerd is missing: the Docker tests need a local engine (apt-get install -y docker.io busybox-static), as .ci/run installs');
  const root = mkdtempSync('/tmp/fmd-');
  const socket = join(root, 'docker.sock');
  const log = join(root, 'dockerd.log');
  const { name: bridge, octet } = createBridge();
  const gatewayBridge = `fmg${octet}`;
  const startEngine = () =>
    spawn(
      'dockerd',
      [
        '--data-root',
        join(root, 'data'),
        '--exec-root',
        join(root, 'exec'),
        '--pidfile',
        join(root, 'docker.pid'),
        '-H',
        `unix://${socket}`,
        '--bridge',
        bridge,
        // Networks the tests create (compose projects) get subnets of the run's own too.
        '--default-address-pool',
        `base=10.233.${octet}.0/24,size=28`,
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', openSync(log, 'a'), openSync(log, 'a')], detached: false },
    );
  let child = startEngine();
  // Two runs whose engines start at the same moment race on the host's shared iptables
  // chains: one engine fails to start, and a second try a moment later does not.
  for (let attempt = 1; ; attempt++) {
    try {
      await waitForSocket(socket, log, child);
      break;
    } catch (error) {
      if (attempt >= 3 || child.exitCode === null || !/iptables/.test((error as Error).message)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1500));
      child = startEngine();
    }
  }
  const env = { ...process.env, DOCKER_HOST: `unix://${socket}` };
  // An engine that goes away under the run fails every later Docker test with ECONNREFUSED
  // and takes its log with it at teardown: say how it ended, and what it last wrote, at once
  // and again after the run, where a CI summary shows it.
  let stopping = false;
  let death: string | undefined;
  const engine = child;
  engine.once('exit', (code, signal) => {
    if (stopping) return;
    death = `the run's private dockerd (pid ${engine.pid}) exited under the tests at ${new Date().toISOString()} (code ${code}, signal ${signal}); the last of its log:\n${readFileSync(log, 'utf8').slice(-6000)}\nthe kernel's last words on killed processes:\n${kernelKills()}`;
    process.stderr.write(`\n${death}\n`);
  });
  importBusybox(root, env);
  // Swarm containers reach the host through the network named docker_gwbridge, whose Linux
  // bridge is also called docker_gwbridge unless the network exists before the swarm does:
  // two engines would share that interface and route each other's published ports away.
  run(
    'docker',
    [
      'network',
      'create',
      '--subnet',
      `10.232.${octet}.0/24`,
      '--opt',
      `com.docker.network.bridge.name=${gatewayBridge}`,
      '--opt',
      'com.docker.network.bridge.enable_icc=false',
      '--opt',
      'com.docker.network.bridge.enable_ip_masquerade=true',
      'docker_gwbridge',
    ],
    env,
  );
  // A one-node swarm, for the swarm tools and stack deployment (plain containers run as before),
  // on ports of its own so two runs at once do not collide on 2377 and 4789. The gossip port
  // that carries service discovery is always 7946, on the advertised address: a loopback
  // address of the run's own (all of 127/8 is local) keeps two engines' gossip apart;
  // sharing one breaks service names in the second engine's stacks.
  const swarmAddress = `127.${octet}.0.1`;
  const swarmPort = 20_000 + Math.floor(Math.random() * 20_000);
  run(
    'docker',
    [
      'swarm',
      'init',
      '--advertise-addr',
      `${swarmAddress}:${swarmPort}`,
      '--listen-addr',
      `${swarmAddress}:${swarmPort}`,
      '--data-path-port',
      String(swarmPort + 1),
    ],
    env,
  );
  return {
    dockerHost: `unix://${socket}`,
    async stop() {
      stopping = true;
      if (death) process.stderr.write(`\n${death}\n`);
      try {
        const ids = run('docker', ['ps', '-aq'], env).split('\n').filter(Boolean);
        if (ids.length) run('docker', ['rm', '-f', ...ids], env);
        run('docker', ['swarm', 'leave', '--force'], env);
      } catch {
        // not in a swarm, or already gone
      }
      if (!death) child.kill('SIGTERM');
      await new Promise((resolve) => {
        if (death) return resolve(undefined);
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve(undefined);
        }, 20_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
      // Overlay mounts left behind would keep the data root busy.
      for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
        const mount = line.split(' ')[1];
        if (mount?.startsWith(root)) {
          try {
            run('umount', ['-l', mount]);
          } catch {
            // already gone
          }
        }
      }
      rmSync(root, { recursive: true, force: true });
      for (const link of [bridge, gatewayBridge]) {
        try {
          run('ip', ['link', 'delete', link]);
        } catch {
          // already gone
        }
      }
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const engine = await startPrivateEngine();
  project.provide('dockerHost', engine.dockerHost);
  project.provide('testImage', TEST_IMAGE);
  return () => engine.stop();
}
