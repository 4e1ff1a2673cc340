import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { inject } from 'vitest';
import { testDocker } from './containers.ts';
import { systemdImage } from './systemd-rootfs.ts';
import { type TarEntry, tarOf } from './tar-entries.ts';
import { makeTempDir } from './temp-dir.ts';
import { waitFor } from './wait.ts';

/** The repository, mounted read-only into the systemd host so an agent can run there from it. */
const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Every capability a privileged container gets, but SYS_RESOURCE, which the
 * machines the tests run on withhold from root (so --privileged cannot start a
 * container at all there). systemd as PID 1 needs SYS_ADMIN above all.
 */
const CAPABILITIES = [
  'AUDIT_CONTROL',
  'AUDIT_READ',
  'AUDIT_WRITE',
  'BLOCK_SUSPEND',
  'CHOWN',
  'DAC_OVERRIDE',
  'DAC_READ_SEARCH',
  'FOWNER',
  'FSETID',
  'IPC_LOCK',
  'IPC_OWNER',
  'KILL',
  'LEASE',
  'LINUX_IMMUTABLE',
  'MAC_ADMIN',
  'MAC_OVERRIDE',
  'MKNOD',
  'NET_ADMIN',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'NET_RAW',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYSLOG',
  'SYS_ADMIN',
  'SYS_BOOT',
  'SYS_CHROOT',
  'SYS_MODULE',
  'SYS_NICE',
  'SYS_PACCT',
  'SYS_PTRACE',
  'SYS_RAWIO',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'WAKE_ALARM',
];

/** Where the agent of the systemd host finds the repository and node. */
export const IN_HOST_REPO = '/opt/fleetmesh';
export const IN_HOST_NODE = '/usr/local/bin/node';

/** A unit file, by name, and whether the default target wants it at boot. */
export interface UnitFile {
  name: string;
  text: string;
  atBoot?: boolean;
}

/** A container running systemd as PID 1, its journal and system bus also reachable from this machine. */
export interface SystemdHost {
  readonly id: string;
  /** The host's /var/log/journal, as this machine sees it (what a containerised agent gets mounted). */
  readonly journalDir: string;
  /** The host's system bus socket, as this machine sees it. */
  readonly busSocket: string;
  /** The host's root file system, as this machine sees it (/proc/PID/root of its systemd): what a containerised agent gets mounted as --host-root. */
  readonly root: string;
  /** Runs a command in the host; resolves with its exit code and output. */
  exec(command: string[]): Promise<{ code: number; output: string }>;
  /** Removes the container and its folders. */
  stop(): Promise<void>;
}

async function execIn(docker: Docker, id: string, command: string[]): Promise<{ code: number; output: string }> {
  const exec = await docker.getContainer(id).exec({ Cmd: command, AttachStdout: true, AttachStderr: true, Tty: true });
  const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
  let output = '';
  stream.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise((resolve) => stream.on('end', resolve));
  const { ExitCode } = await exec.inspect();
  return { code: ExitCode ?? -1, output };
}

/**
 * Starts systemd as PID 1 in a container of the tests' private engine, from
 * the Debian rootfs built once with mmdebstrap (cached), with the given files
 * and units put in before it boots, on the machine's network (so an agent in
 * it dials the test broker on loopback). Its journal directory and its
 * /run/dbus are folders of this machine, mounted in: an agent outside reads
 * them as a containerised agent reads the host's. Resolves once boot is done.
 */
export async function startSystemdHost(options: { name: string; units?: UnitFile[]; files?: TarEntry[] }): Promise<SystemdHost> {
  const docker = testDocker();
  const image = await systemdImage(inject('dockerHost'));
  const temp = makeTempDir('fm-systemd-');
  const journalDir = join(temp.path, 'journal');
  const dbusDir = join(temp.path, 'dbus');
  mkdirSync(journalDir);
  mkdirSync(dbusDir);
  const units = options.units ?? [];
  const atBoot = units.filter((unit) => unit.atBoot).map((unit) => unit.name);
  const files: TarEntry[] = [
    ...units.map((unit) => ({ path: `etc/systemd/system/${unit.name}`, content: Buffer.from(unit.text) })),
    // The default target wants them, as `systemctl enable` would say with a link.
    ...(atBoot.length
      ? [{ path: 'etc/systemd/system/multi-user.target.d/fleetmesh-test.conf', content: Buffer.from(`[Unit]\nWants=${atBoot.join(' ')}\n`) }]
      : []),
    // Memory, CPU and tasks of each unit's cgroup, for service_status.
    {
      path: 'etc/systemd/system.conf.d/accounting.conf',
      content: Buffer.from('[Manager]\nDefaultCPUAccounting=yes\nDefaultMemoryAccounting=yes\nDefaultTasksAccounting=yes\n'),
    },
    ...(options.files ?? []),
  ];
  const container = await docker.createContainer({
    name: options.name,
    Hostname: options.name,
    Image: image,
    Env: ['container=docker'],
    HostConfig: {
      CapAdd: CAPABILITIES,
      SecurityOpt: ['seccomp=unconfined', 'apparmor=unconfined'],
      NetworkMode: 'host',
      // systemd mounts its own cgroup hierarchies on an empty /sys/fs/cgroup, in a cgroup namespace of its own
      // (a field of the engine's API that dockerode's types lack).
      ...({ CgroupnsMode: 'private' } as object),
      Tmpfs: { '/run': 'rw,exec,mode=755', '/run/lock': 'rw', '/tmp': 'rw,exec', '/sys/fs/cgroup': 'rw' },
      Binds: [`${journalDir}:/var/log/journal`, `${dbusDir}:/run/dbus`, `${REPO}:${IN_HOST_REPO}:ro`, `${process.execPath}:${IN_HOST_NODE}:ro`],
    },
  });
  const stop = async () => {
    await container.remove({ force: true }).catch(() => undefined);
    temp.remove();
  };
  try {
    await container.putArchive(tarOf(dirsOf(files)), { path: '/' });
    await container.start();
    const { State } = await container.inspect();
    const host: SystemdHost = {
      id: container.id,
      journalDir,
      busSocket: join(dbusDir, 'system_bus_socket'),
      // The private engine runs on this machine, in its PID namespace.
      root: `/proc/${State.Pid}/root`,
      exec: (command) => execIn(docker, container.id, command),
      stop,
    };
    await waitFor(
      async () => {
        const state = (await host.exec(['systemctl', 'is-system-running'])).output.trim();
        return state === 'running' || state === 'degraded';
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `systemd in ${options.name} to finish booting` },
    );
    return host;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The files with every folder above them, as a tar archive lists them. */
function dirsOf(files: TarEntry[]): TarEntry[] {
  const dirs = new Set<string>();
  for (const file of files) {
    const parts = file.path.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return [...[...dirs].sort().map((path) => ({ path })), ...files];
}
