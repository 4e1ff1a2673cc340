import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type si from 'systeminformation';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPorts, processes } from '../../../shared/domains/system/system-actions.ts';
import type { ErrorInfo } from '../../../shared/errors/fleet-error.ts';
import { createLogger } from '../../../shared/log/logger.ts';
import { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { SystemSampler } from '../../sampler/system-sampler.ts';
import { containerIdOf, HostProcesses, processName } from './host-processes.ts';
import { readHostSockets } from './host-sockets.ts';
import { ownsPidNamespace } from './own-pid-namespace.ts';
import { type ProcFiles, procFiles } from './proc-files.ts';
import { SystemCollector } from './system-collector.ts';
import type { SystemInfo } from './system-info.ts';

interface FakeProcess {
  pid: number;
  comm: string;
  cmdline: string;
  state: string;
  utime: number;
  stime: number;
  uid: number;
  rssKib: number;
  /** fd number → link target. */
  fds: Record<number, string>;
}

const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';

/** A line of /proc/net/tcp and its kin. */
function socketLine(local: string, state: string, inode: number, remote = '00000000:0000'): string {
  return `   0: ${local} ${remote} ${state} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`;
}

/**
 * A proc tree in a temporary directory, as the host's /proc looks mounted into
 * the agent's container: the host's processes, and in `1/net` the host's
 * sockets. `net` at the top holds other sockets (the container's, which a
 * /proc mounted from the host would show through `self`): never to be reported.
 */
function writeProcTree(root: string, list: FakeProcess[], totalTicks: number): void {
  writeFileSync(join(root, 'stat'), `cpu  ${totalTicks / 2} 0 0 ${totalTicks / 2} 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\n`);
  writeFileSync(join(root, 'meminfo'), 'MemTotal:        1000000 kB\nMemFree:          500000 kB\n');
  for (const p of list) {
    const dir = join(root, String(p.pid));
    mkdirSync(join(dir, 'fd'), { recursive: true });
    writeFileSync(join(dir, 'stat'), `${p.pid} (${p.comm}) ${p.state} 1 1 1 0 -1 4194560 100 0 0 0 ${p.utime} ${p.stime} 0 0 20 0 1 0 100 1000 10\n`);
    writeFileSync(join(dir, 'status'), `Name:\t${p.comm}\nState:\t${p.state}\nUid:\t${p.uid}\t${p.uid}\t${p.uid}\t${p.uid}\nVmRSS:\t  ${p.rssKib} kB\n`);
    writeFileSync(join(dir, 'comm'), `${p.comm}\n`);
    writeFileSync(join(dir, 'cmdline'), p.cmdline);
    for (const [fd, target] of Object.entries(p.fds)) {
      rmSync(join(dir, 'fd', fd), { force: true });
      symlinkSync(target, join(dir, 'fd', fd), 'file');
    }
  }
}

const PROCESSES: FakeProcess[] = [
  { pid: 1, comm: 'systemd', cmdline: '/sbin/init\0splash\0', state: 'S', utime: 10, stime: 10, uid: 0, rssKib: 10_000, fds: { 7: 'socket:[222]' } },
  { pid: 2, comm: 'kthreadd', cmdline: '', state: 'I', utime: 0, stime: 0, uid: 0, rssKib: 0, fds: {} },
  {
    pid: 4242,
    // The kernel keeps 15 characters; the command line has the whole name.
    comm: 'fmprobe-listene',
    cmdline: '/opt/bin/fmprobe-listener\0--secret=hunter2\0',
    state: 'R',
    utime: 60,
    stime: 40,
    uid: 1000,
    rssKib: 100_000,
    fds: { 0: '/dev/null', 3: 'socket:[111]', 4: 'pipe:[9]' },
  },
  { pid: 4300, comm: 'defunct', cmdline: '', state: 'Z', utime: 0, stime: 0, uid: 1000, rssKib: 0, fds: {} },
  // A forked worker sharing its parent's listening socket.
  { pid: 5000, comm: 'worker', cmdline: 'worker\0', state: 'S', utime: 0, stime: 0, uid: 33, rssKib: 2000, fds: { 5: 'socket:[111]', 6: 'socket:[333]' } },
];

function writeHostNet(root: string): void {
  const net = join(root, '1', 'net');
  mkdirSync(net, { recursive: true });
  writeFileSync(
    join(net, 'tcp'),
    TCP_HEADER +
      socketLine('0100007F:1F90', '0A', 111) +
      // An established connection is not a listening port.
      socketLine('0100007F:D431', '01', 444, '0100007F:1F90'),
  );
  writeFileSync(join(net, 'tcp6'), TCP_HEADER + socketLine('00000000000000000000000000000000:0016', '0A', 222));
  writeFileSync(
    join(net, 'udp'),
    TCP_HEADER +
      socketLine('00000000:0035', '07', 333) +
      // A connected UDP socket (a resolver's query) receives from one peer only.
      socketLine('0100007F:E000', '01', 555, '08080808:0035'),
  );
  writeFileSync(join(net, 'udp6'), TCP_HEADER + socketLine('0000000000000000FFFF00000100007F:0202', '07', 666));
  mkdirSync(join(root, '1', 'root', 'etc'), { recursive: true });
  writeFileSync(join(root, '1', 'root', 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n');
  // The agent's own namespace, which <root>/net resolves to: not the host's.
  mkdirSync(join(root, 'net'));
  writeFileSync(join(root, 'net', 'tcp'), TCP_HEADER + socketLine('0100007F:270F', '0A', 999));
}

/** Proc files that refuse, as the kernel does, the open files of the processes named. */
function refusing(root: string, pids: number[]): ProcFiles {
  const refused = (path: string) => pids.some((pid) => path.startsWith(join(root, String(pid), 'fd')));
  const denied = () => Object.assign(new Error('permission denied'), { code: 'EACCES' });
  return {
    readText: procFiles.readText,
    list: (path) => (refused(path) ? Promise.reject(denied()) : procFiles.list(path)),
    readLink: (path) => (refused(path) ? Promise.reject(denied()) : procFiles.readLink(path)),
  };
}

let root = '';
beforeEach(() => {
  root = join(tmpdir(), `fm-proc-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(root);
  writeProcTree(root, PROCESSES, 1000);
  writeHostNet(root);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('reading the host processes from its mounted /proc', () => {
  it('names a process after its program, whatever its main thread is called', () => {
    expect(processName('node', '/usr/local/bin/node\0server.js\0')).toBe('node');
    expect(processName('MainThread', '/usr/local/bin/node\0server.js\0', '/usr/local/bin/node')).toBe('node');
    expect(processName('systemd', '/sbin/init\0splash\0', '/usr/lib/systemd/systemd')).toBe('systemd');
    expect(processName('systemd', '/sbin/init\0splash\0')).toBe('systemd');
    expect(processName('systemd-journal', '/usr/lib/systemd/systemd-journald\0')).toBe('systemd-journald');
    expect(processName('nginx', 'nginx: worker process\0')).toBe('nginx: worker process');
    expect(processName('kworker/0:1', '')).toBe('kworker/0:1');
  });

  it('names each process, its user from the host passwd, its state, memory and CPU share since boot', async () => {
    const table = await new HostProcesses(root).read();
    expect(table.all).toBe(5);
    expect(table.unreadable).toBe(0);
    const byPid = new Map(table.list.map((p) => [p.pid, p]));
    expect(byPid.get(4242)).toEqual({ pid: 4242, name: 'fmprobe-listener', user: 'alice', state: 'running', cpu: 10, mem: 10, memRss: 100_000 });
    expect(byPid.get(1)).toMatchObject({ name: 'systemd', user: 'root', state: 'sleeping' });
    expect(byPid.get(2)).toMatchObject({ name: 'kthreadd', user: 'root' });
    expect(byPid.get(4300)).toMatchObject({ state: 'zombie' });
    // A uid the host's passwd does not name is shown as the number.
    expect(byPid.get(5000)).toMatchObject({ name: 'worker', user: '33' });
  });

  it('measures CPU between two readings, as top does', async () => {
    const reader = new HostProcesses(root);
    await reader.read();
    // 200 more ticks of the machine, 50 of them spent by pid 4242.
    writeProcTree(root, [{ ...(PROCESSES[2] as FakeProcess), utime: 100, stime: 50, fds: {} }], 1200);
    const again = await reader.read();
    expect(again.list.find((p) => p.pid === 4242)?.cpu).toBe(25);
    expect(again.list.find((p) => p.pid === 1)?.cpu).toBe(0);
  });

  it('measures CPU over a fixed window at the call, in cores as top counts them, whoever asked before', async () => {
    // Two CPUs; over the window the machine spends 200 ticks (100 per core), pid 4242 spends 150 of them.
    const busyTree = () => writeProcTree(root, [{ ...(PROCESSES[2] as FakeProcess), utime: 160, stime: 90, fds: {} }], 1200);
    writeFileSync(join(root, 'stat'), 'cpu  500 0 0 500 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\n');
    const twoCpus = (text: string) => (text.startsWith('cpu ') ? `${text}cpu1 1 0 0 1 0 0 0 0 0 0\n` : text);
    let rootStatReads = 0;
    const files: ProcFiles = {
      ...procFiles,
      readText: async (path) => {
        // /proc/stat is read before and after each reading's processes: the window's busy second begins with the third read.
        if (path === join(root, 'stat') && ++rootStatReads === 3) busyTree();
        return twoCpus(await procFiles.readText(path));
      },
    };
    const first = new HostProcesses(root, files);
    // A reader asked long ago and one that never asked measure the same window alike.
    await first.read();
    writeProcTree(root, PROCESSES, 1000);
    rootStatReads = 0;
    const measured = await first.measure(5);
    expect(measured.cpus).toBe(2);
    expect(measured.list.find((p) => p.pid === 4242)?.cpu).toBe(150);
    writeProcTree(root, PROCESSES, 1000);
    rootStatReads = 0;
    expect((await new HostProcesses(root, files).measure(5)).list.find((p) => p.pid === 4242)?.cpu).toBe(150);
  });

  it('gives a process that keeps one core busy 100 %, however long reading the other processes takes', async () => {
    // Two CPUs, and time passes as files are read: every read is one tick of each core, the window itself 100 ticks
    // (from the third read of /proc/stat on, the reading at its end), and pid 4242 runs on one core the whole time.
    // A whole reading reads more of each process than the ticks-only one a window starts with.
    writeProcTree(root, PROCESSES, 1000);
    let clock = 0;
    let statReads = 0;
    const files: ProcFiles = {
      ...procFiles,
      readText: async (path) => {
        clock += 2;
        if (path === join(root, 'stat') && ++statReads === 3) clock += 200;
        if (path === join(root, 'stat')) return `cpu  ${clock / 2} 0 0 ${clock / 2} 0 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\ncpu1 1 0 0 1 0 0 0 0 0 0\n`;
        const text = await procFiles.readText(path);
        return path === join(root, '4242', 'stat') ? text.replace(/^(\S+ \(.*\) (?:\S+ ){11})\d+ \d+/, `$1${clock / 2} 0`) : text;
      },
    };
    const busy = (await new HostProcesses(root, files).measure(5)).list.find((p) => p.pid === 4242)?.cpu ?? 0;
    expect(busy).toBeGreaterThan(95);
    expect(busy).toBeLessThanOrEqual(105);
  });

  it('tells which container a process runs in from its cgroup, with either driver and cgroup version', () => {
    const id = 'ab'.repeat(32);
    expect(containerIdOf(`0::/system.slice/docker-${id}.scope\n`)).toBe(id);
    expect(containerIdOf(`12:memory:/docker/${id}\n11:cpu:/docker/${id}\n`)).toBe(id);
    expect(containerIdOf(`0::/kubepods/burstable/pod1234/${id}\n`)).toBe(id);
    expect(containerIdOf('0::/user.slice/user-1000.slice/session-2.scope\n')).toBeUndefined();
  });

  it('counts processes it may not read instead of failing', async () => {
    const files: ProcFiles = {
      ...procFiles,
      readText: (path) =>
        path.startsWith(join(root, '5000')) ? Promise.reject(Object.assign(new Error('denied'), { code: 'EACCES' })) : procFiles.readText(path),
    };
    const table = await new HostProcesses(root, files).read();
    expect(table).toMatchObject({ all: 4, unreadable: 1 });
  });
});

describe('reading the host listening sockets from its mounted /proc', () => {
  it("lists the host namespace's listening sockets with the lowest pid holding each, never the agent's own", async () => {
    const table = await readHostSockets(root);
    expect(table.sockets).toEqual([
      { protocol: 'tcp', address: '127.0.0.1', port: 8080, pid: 4242, process: 'fmprobe-listener' },
      { protocol: 'tcp', address: '::', port: 22, pid: 1, process: 'systemd' },
      { protocol: 'udp', address: '0.0.0.0', port: 53, pid: 5000, process: 'worker' },
      { protocol: 'udp', address: '::ffff:127.0.0.1', port: 514, pid: null, process: null },
    ]);
    expect(table.refusedProcesses).toBe(0);
  });

  it('counts the processes whose open files it may not read', async () => {
    const table = await readHostSockets(root, refusing(root, [1]));
    expect(table.sockets.find((s) => s.port === 22)).toMatchObject({ pid: null, process: null });
    expect(table.refusedProcesses).toBe(1);
  });
});

describe('the heartbeat with a host /proc', () => {
  it("counts the bytes of the host's interfaces, not the container's", () => {
    const dev = (rx: number, tx: number) =>
      'Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n' +
      `    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0\n  eth0: ${rx} 10 0 0 0 0 0 0 ${tx} 10 0 0 0 0 0 0\n`;
    writeFileSync(join(root, '1', 'net', 'dev'), dev(5000, 7000));
    writeFileSync(join(root, 'net', 'dev'), dev(1, 2));
    const sample = new SystemSampler(undefined, 5000, 2000, root).heartbeatSample();
    expect(sample).toMatchObject({ net_rx_bytes: 5000, net_tx_bytes: 7000 });
  });
});

describe('the system collector with a host /proc', () => {
  /** systeminformation would read the agent's own /proc: any use of it here is a failure. */
  const noSi = new Proxy({} as SystemInfo, {
    get: (_, name) => () => Promise.reject(new Error(`systeminformation.${String(name)} must not be asked`)),
  }) as unknown as typeof si;

  async function ask(action: typeof processes | typeof openPorts, params: object, files?: ProcFiles, withHostProc = true) {
    const dispatcher = new Dispatcher(createLogger({ level: 'error', format: 'text' }));
    const collector = new SystemCollector({
      sampler: new SystemSampler(),
      si: noSi,
      thresholds: { cpu: 90, memory: 85, disk: 90 },
      dataDir: undefined,
      hostProc: withHostProc ? root : undefined,
      containerOnly: !withHostProc,
      cpuWindowMs: 5,
      ...(files ? { procFiles: files } : {}),
    });
    collector.register(dispatcher);
    return new Promise<{ payload: unknown; failedCollectors: string[]; errors: ErrorInfo[] }>((resolve) => {
      void dispatcher.run(
        {
          callId: 'c1',
          action: action.id,
          paramsJson: new TextEncoder().encode(JSON.stringify(params)),
          deadlineUnixMs: Date.now() + 10_000,
          caller: 'test',
          callerLevel: 0,
        },
        {
          chunk: () => undefined,
          result: (_, payload, failedCollectors, errors) => resolve({ payload: JSON.parse(new TextDecoder().decode(payload)), failedCollectors, errors }),
        },
      );
    });
  }

  it('answers processes from the host, each CPU share measured over the window at the call', async () => {
    // Over the window the machine spends 200 ticks, pid 4242 20 of them.
    let rootStatReads = 0;
    const files: ProcFiles = {
      ...procFiles,
      readText: (path) => {
        // Read before and after each reading's processes: the window's end begins with the third read.
        if (path === join(root, 'stat') && ++rootStatReads === 3) writeProcTree(root, [{ ...(PROCESSES[2] as FakeProcess), utime: 70, stime: 50 }], 1200);
        return procFiles.readText(path);
      },
    };
    const answer = await ask(processes, { limit: 1 }, files);
    expect(answer.payload).toMatchObject({
      processes: [{ pid: 4242, name: 'fmprobe-listener', user: 'alice', cpu_percent: 10, mem_percent: 10, rss_bytes: 100_000 * 1024, container: null }],
      zombies: [{ pid: 4300 }],
      total: 5,
      cpu_window_ms: 5,
      cpu_cores: 1,
    });
    expect(answer.failedCollectors).toEqual([]);
  });

  it('answers open_ports from the host, and says which owners it could not read', async () => {
    const answer = await ask(openPorts, {}, refusing(root, [1]));
    expect((answer.payload as { ports: unknown[] }).ports).toContainEqual({
      protocol: 'tcp',
      address: '127.0.0.1',
      port: 8080,
      pid: 4242,
      process: 'fmprobe-listener',
      container: null,
    });
    expect(answer.failedCollectors).toEqual(['system']);
    expect(answer.errors).toEqual([
      expect.objectContaining({ code: 'collector_failed', collector: 'system', message: expect.stringMatching(/2 of 4 listening sockets.*1 host processes/) }),
    ]);
    expect(answer.errors[0]?.hint).toMatch(/SYS_PTRACE/);
  });

  it('says nothing of unreadable holders when every port asked about has its holder', async () => {
    const answer = await ask(openPorts, { port: 8080 }, refusing(root, [1]));
    expect(answer).toMatchObject({ failedCollectors: [], errors: [] });
  });

  it("fails rather than answer with the agent's own view when the host /proc cannot be read", async () => {
    rmSync(join(root, '1', 'net'), { recursive: true });
    const ports = await ask(openPorts, {});
    expect(ports.payload).toBeNull();
    expect(ports.errors).toEqual([expect.objectContaining({ code: 'collector_failed', collector: 'system' })]);
    rmSync(join(root, 'stat'));
    const listed = await ask(processes, {});
    expect(listed.payload).toBeNull();
    expect(listed.errors[0]?.message).toMatch(/the host's processes could not be read/);
  });

  it('refuses in a container of its own without the host /proc, rather than describe the container', async () => {
    for (const action of [processes, openPorts]) {
      const answer = await ask(action, {}, undefined, false);
      expect(answer.payload).toBeNull();
      expect(answer.errors).toEqual([
        expect.objectContaining({ code: 'collector_unavailable', collector: 'system', hint: expect.stringMatching(/\/host\/proc/) }),
      ]);
    }
  });
});

describe('telling a container of its own pid namespace from a host', () => {
  it('is one when the agent is pid 1, or a container init is', () => {
    expect(ownsPidNamespace(1, root)).toBe(true);
    writeFileSync(join(root, '1', 'comm'), 'docker-init\n');
    expect(ownsPidNamespace(4242, root)).toBe(true);
  });

  it("is not one when pid 1 is the host's init system", () => {
    writeFileSync(join(root, '1', 'comm'), 'systemd\n');
    expect(ownsPidNamespace(4242, root)).toBe(false);
  });
});
