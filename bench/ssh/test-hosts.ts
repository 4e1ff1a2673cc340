import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** This machine's users, root's login shell made /bin/sh. */
function rootWithSh(): string {
  return readFileSync('/etc/passwd', 'utf8').replace(/^(root:[^:]*:0:0:[^:]*:[^:]*:)[^\n]*$/m, '$1/bin/sh');
}

/** The name agents dial: each namespace's own hosts file points it at the broker's end of its link. */
export const BROKER_NAME = 'fleetmesh-bench-broker';

interface TestHost {
  index: number;
  namespace: string;
  /** This host's address (sshd listens here). */
  address: string;
  /** The root namespace's end of the link (where the broker is reached). */
  gatewayAddress: string;
}

/**
 * Test hosts as network namespaces on this machine, each linked to the root
 * namespace by a veth pair on a /30 of its own, with its own sshd (own config,
 * own keys under a temp dir) and whatever else is started in it. Everything made
 * here is undone by `destroy`, which is safe to call at any point and twice.
 */
export class TestHosts {
  readonly hosts: TestHost[] = [];
  private readonly processes: ChildProcess[] = [];
  private readonly prefix: string;
  private destroyed = false;

  constructor(
    private readonly root: string,
    private readonly subnet: string,
  ) {
    // Names unique to this run (interface names are at most 15 characters).
    this.prefix = `fmb${process.pid % 100_000}`;
  }

  /** A free 10.N.0.0/16 for the links, so no other namespace on the machine is ever addressed. */
  static async freeSubnet(): Promise<string> {
    const { stdout } = await run('ip', ['-4', '-o', 'addr']);
    for (let n = 240; n < 255; n++) if (!stdout.includes(` 10.${n}.`)) return `10.${n}`;
    throw new Error('no free 10.240-254.0.0/16 for the test hosts');
  }

  async create(count: number): Promise<void> {
    const passwd = rootWithSh();
    for (let i = 0; i < count; i++) {
      const namespace = `${this.prefix}-${i}`;
      const outside = `${this.prefix}h${i}`;
      const inside = `${this.prefix}n${i}`;
      // Host i's /30: .(4i+1) outside, .(4i+2) inside, within 10.N.0.0/16.
      const base = 4 * i;
      const gatewayAddress = `${this.subnet}.${Math.floor((base + 1) / 256)}.${(base + 1) % 256}`;
      const address = `${this.subnet}.${Math.floor((base + 2) / 256)}.${(base + 2) % 256}`;
      this.hosts.push({ index: i, namespace, address, gatewayAddress });
      await run('ip', ['netns', 'add', namespace]);
      await run('ip', ['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside]);
      await run('ip', ['link', 'set', inside, 'netns', namespace]);
      await run('ip', ['addr', 'add', `${gatewayAddress}/30`, 'dev', outside]);
      await run('ip', ['link', 'set', outside, 'up']);
      await run('ip', ['-n', namespace, 'addr', 'add', `${address}/30`, 'dev', inside]);
      await run('ip', ['-n', namespace, 'link', 'set', inside, 'up']);
      await run('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
      // `ip netns exec` binds /etc/netns/NAME/hosts over /etc/hosts inside.
      mkdirSync(`/etc/netns/${namespace}`, { recursive: true });
      writeFileSync(`/etc/netns/${namespace}/hosts`, `127.0.0.1 localhost\n${gatewayAddress} ${BROKER_NAME}\n`);
      // And /etc/netns/NAME/passwd over /etc/passwd: inside, root's login shell is /bin/sh, so an ssh command
      // costs what SSH costs, not what this machine's root shell start-up files do (a bashrc may run for seconds).
      writeFileSync(`/etc/netns/${namespace}/passwd`, passwd);
    }
  }

  /** Starts a long-running command inside a host's namespace; `destroy` stops it. */
  spawnIn(host: TestHost, command: string, args: string[], logFile: string): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', host.namespace, command, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (data: Buffer) => writeFileSync(logFile, data, { flag: 'a' }));
    this.processes.push(child);
    return child;
  }

  /** An sshd in every namespace with its own config: ed25519 keys under the temp dir, StrictModes off for them. */
  async startSshd(): Promise<{ clientKey: string }> {
    const dir = join(this.root, 'ssh');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const hostKey = join(dir, 'host_ed25519');
    const clientKey = join(dir, 'client_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', clientKey]);
    const authorized = join(dir, 'authorized_keys');
    writeFileSync(authorized, readFileSync(`${clientKey}.pub`), { mode: 0o600 });
    // sshd's privilege separation directory, which its service unit would create.
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    for (const host of this.hosts) {
      const config = join(dir, `sshd-${host.index}.conf`);
      writeFileSync(
        config,
        [
          `ListenAddress ${host.address}`,
          'Port 22',
          `HostKey ${hostKey}`,
          `AuthorizedKeysFile ${authorized}`,
          `PidFile ${join(dir, `sshd-${host.index}.pid`)}`,
          'StrictModes no',
          'PermitRootLogin prohibit-password',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'UsePAM no',
          'UseDNS no',
          'MaxStartups 200',
          '',
        ].join('\n'),
      );
      this.spawnIn(host, '/usr/sbin/sshd', ['-D', '-e', '-f', config], join(dir, `sshd-${host.index}.log`));
    }
    return { clientKey };
  }

  /** Stops every process started here, deletes the namespaces (their veth pairs go with them) and their hosts files. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all(
      this.processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
    for (const host of this.hosts) {
      await run('ip', ['netns', 'del', host.namespace]).catch(() => {});
      // Gone with the namespace, unless creation stopped before the peer moved in.
      await run('ip', ['link', 'del', `${this.prefix}h${host.index}`]).catch(() => {});
      rmSync(`/etc/netns/${host.namespace}`, { recursive: true, force: true });
    }
    // /etc/netns itself only when nothing else on the machine uses it.
    try {
      rmdirSync('/etc/netns');
    } catch {}
  }
}
