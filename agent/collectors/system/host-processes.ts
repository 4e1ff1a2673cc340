import { basename, join } from 'node:path';
import { type ProcFiles, procFiles } from './proc-files.ts';

/** One process as the processes tool reports it (the fields systeminformation's `processes` gives it). */
interface ProcessRow {
  pid: number;
  name: string;
  user: string;
  state: string;
  /** Share of one CPU core since the previous reading, percent (top's figure: a process busy on two cores is at 200). */
  cpu: number;
  /** Resident memory as a share of the machine's memory, percent. */
  mem: number;
  /** Resident memory, KiB. */
  memRss: number;
  /** The id of the container whose cgroup holds the process (64 hex digits); absent for one of the host's own. */
  containerId?: string;
}

export interface ProcessTable {
  list: ProcessRow[];
  all: number;
  /** Processes whose files could not be read (a /proc mounted with hidepid). */
  unreadable: number;
  /** The machine's CPUs, when the reading knows them: a share of one core goes up to this times 100. */
  cpus?: number;
}

/** The pids of a proc tree: its numeric entries. */
export async function procPids(root: string, files: ProcFiles): Promise<number[]> {
  return (await files.list(root)).filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Processes read at once. */
const BATCH = 64;

/** The process states of /proc/PID/stat, named as systeminformation names them. */
const STATES: Record<string, string> = {
  R: 'running',
  S: 'sleeping',
  I: 'sleeping',
  T: 'stopped',
  t: 'stopped',
  W: 'paging',
  X: 'dead',
  Z: 'zombie',
  D: 'blocked',
};

/** The sum of every CPU's time in the first line of /proc/stat, in clock ticks, and how many CPUs it sums (its `cpuN` lines). */
function cpuTicks(statText: string): { totalTicks: number; cpus: number } {
  const first = statText.split('\n', 1)[0] ?? '';
  const totalTicks = first
    .trim()
    .split(/\s+/)
    .slice(1)
    .reduce((sum, field) => sum + (Number(field) || 0), 0);
  return { totalTicks, cpus: Math.max(1, (statText.match(/^cpu\d+ /gm) ?? []).length) };
}

/**
 * The container a process runs in, from its cgroup paths: Docker names each
 * container's cgroup after its id (`/docker/<id>`, `docker-<id>.scope`), with
 * either cgroup driver and either cgroup version.
 */
export function containerIdOf(cgroupText: string): string | undefined {
  return /[-/]([0-9a-f]{64})(?:\.scope)?$/m.exec(cgroupText)?.[1];
}

/**
 * A process's name: the kernel's (`comm`, cut at 15 characters), made whole
 * from the first word of the command line when that begins with it; a kernel
 * thread has no command line. When neither begins with the other (a main
 * thread named by its program, as Node 24 names it `MainThread`; `/sbin/init`
 * started as systemd), the file name of the program it runs (`exe`) decides,
 * when it can be read. The rest of the command line is never used.
 */
export function processName(comm: string, cmdline: string, exe = ''): string {
  const argv0 = basename(cmdline.split('\0', 1)[0] ?? '');
  if (argv0 && comm && argv0.startsWith(comm)) return argv0;
  const program = basename(exe.replace(/ \(deleted\)$/, ''));
  return (argv0 && program) || comm || argv0;
}

/** Name → uid lines of an /etc/passwd. */
function userNames(passwd: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const line of passwd.split('\n')) {
    const [name, , uid] = line.split(':');
    if (name && uid && /^\d+$/.test(uid) && !names.has(Number(uid))) names.set(Number(uid), name);
  }
  return names;
}

interface RawProcess {
  pid: number;
  name: string;
  stateLetter: string;
  ticks: number;
  uid: number | undefined;
  rssKib: number;
  containerId: string | undefined;
}

const isVanished = (error: unknown) => ['ENOENT', 'ESRCH'].includes((error as NodeJS.ErrnoException).code ?? '');
const isRefused = (error: unknown) => ['EACCES', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '');

/**
 * Reads a process: undefined when it exited while being read, 'refused' when
 * its files may not be read. `stat` is
 * parsed from the last `)`: the command name between the parentheses may hold
 * spaces and parentheses of its own.
 */
async function readProcess(root: string, pid: number, files: ProcFiles): Promise<RawProcess | 'refused' | undefined> {
  const dir = join(root, String(pid));
  let stat: string;
  let status: string;
  try {
    [stat, status] = await Promise.all([files.readText(join(dir, 'stat')), files.readText(join(dir, 'status'))]);
  } catch (error) {
    if (isVanished(error)) return undefined;
    if (isRefused(error)) return 'refused';
    throw error;
  }
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const fields = stat
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // Fields after the name, counted from 0: state, …, utime (11), stime (12).
  const ticks = (Number(fields[11]) || 0) + (Number(fields[12]) || 0);
  const uid = /^Uid:\s+\d+\s+(\d+)/m.exec(status)?.[1];
  const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  // A kernel thread or a zombie has an empty command line; the name is then the kernel's.
  const [cmdline, cgroup] = await Promise.all([files.readText(join(dir, 'cmdline')).catch(() => ''), files.readText(join(dir, 'cgroup')).catch(() => '')]);
  const comm = stat.slice(open + 1, close);
  const argv0 = basename(cmdline.split('\0', 1)[0] ?? '');
  // Only read where comm and the command line disagree; reading exe needs the same rights as fd.
  const exe = argv0 && !argv0.startsWith(comm) ? await files.readLink(join(dir, 'exe')).catch(() => '') : '';
  return {
    pid,
    name: processName(comm, cmdline, exe),
    stateLetter: fields[0] ?? '',
    ticks,
    uid: uid === undefined ? undefined : Number(uid),
    rssKib: rss === undefined ? 0 : Number(rss),
    containerId: containerIdOf(cgroup),
  };
}

/** The CPU ticks a process has spent (utime + stime of its stat), undefined when it is gone or unreadable. */
/**
 * The machine's ticks at the moment the `index`-th of `count` processes was
 * read: /proc/stat is read before and after the pass, and the ticks in
 * between are shared out in read order. A pass over a loaded host's processes
 * takes tens of milliseconds; measured against /proc/stat as read before each
 * pass, with a longer pass at the window's end than at its start, a process's
 * share came out of a longer span than the machine's (103 % of a core for one
 * thread, the shares summing past the cores on a busy host).
 */
function ticksAt(before: number, after: number, index: number, count: number): number {
  return before + ((after - before) * (index + 0.5)) / Math.max(1, count);
}

async function readTicks(root: string, pid: number, files: ProcFiles): Promise<number | undefined> {
  try {
    const stat = await files.readText(join(root, String(pid), 'stat'));
    const fields = stat
      .slice(stat.lastIndexOf(')') + 2)
      .trim()
      .split(/\s+/);
    return (Number(fields[11]) || 0) + (Number(fields[12]) || 0);
  } catch {
    return undefined;
  }
}

/**
 * The processes of a proc tree (the host's /proc mounted into the agent's
 * container, or the agent's own /proc): the figures systeminformation's
 * `processes` gives, read from the files instead of `ps`, which would show the
 * container's own processes. CPU shares are measured between two readings, as
 * top does, and counted in cores as top counts them; the first reading
 * divides by the machine's time since boot. `measure` takes both readings
 * itself, a fixed window apart, so every caller gets the same kind of figure.
 */
export class HostProcesses {
  /** Each process's ticks at the last reading, with the machine's ticks at the moment it was read (`ticksAt`). */
  private previous: Map<number, { spent: number; total: number }> | undefined;

  constructor(
    private readonly root: string,
    private readonly files: ProcFiles = procFiles,
  ) {}

  async read(): Promise<ProcessTable> {
    const [meminfo, { pids, ticks, cpus, after }] = await Promise.all([this.files.readText(join(this.root, 'meminfo')), this.ticks()]);
    const memTotalKib = Number(/^MemTotal:\s+(\d+)/m.exec(meminfo)?.[1] ?? 0);
    const names = await this.userNames();
    const read: (RawProcess | 'refused' | undefined)[] = [];
    // In batches: a host runs thousands of processes, and each read holds a file open.
    for (let at = 0; at < pids.length; at += BATCH) {
      read.push(...(await Promise.all(pids.slice(at, at + BATCH).map((pid) => readProcess(this.root, pid, this.files)))));
    }
    const raw = read.flatMap((p) => {
      if (p === undefined || p === 'refused') return [];
      // The ticks of the ticks-only pass, like the one a window starts with: a process that began since has its own.
      const at = ticks.get(p.pid);
      return [at ? { ...p, ticks: at.spent, total: at.total } : { ...p, total: after }];
    });
    const previous = this.previous;
    const list = raw.map((p): ProcessRow => {
      const before = previous?.get(p.pid);
      const spent = before === undefined ? p.ticks : p.ticks - before.spent;
      // The machine's ticks count every CPU: one core's time is that over the number of CPUs.
      const elapsed = (before === undefined ? p.total : p.total - before.total) / cpus;
      return {
        pid: p.pid,
        name: p.name,
        user: p.uid === undefined ? '' : (names.get(p.uid) ?? String(p.uid)),
        state: STATES[p.stateLetter] ?? 'unknown',
        cpu: elapsed > 0 ? Math.min(100 * cpus, Math.max(0, (spent / elapsed) * 100)) : 0,
        mem: memTotalKib > 0 ? (p.rssKib / memTotalKib) * 100 : 0,
        memRss: p.rssKib,
        ...(p.containerId ? { containerId: p.containerId } : {}),
      };
    });
    this.previous = new Map(raw.map((p) => [p.pid, { spent: p.ticks, total: p.total }]));
    return { list, all: list.length, unreadable: read.filter((p) => p === 'refused').length, cpus };
  }

  /**
   * Every process's ticks, each with the machine's ticks at the moment it was
   * read (`ticksAt`): the same pass at both ends of a window, so that both
   * ends are taken alike.
   */
  private async ticks(): Promise<{ pids: number[]; ticks: Map<number, { spent: number; total: number }>; cpus: number; after: number }> {
    const [statText, pids] = await Promise.all([this.files.readText(join(this.root, 'stat')), procPids(this.root, this.files)]);
    const spent: (number | undefined)[] = [];
    for (let at = 0; at < pids.length; at += BATCH) {
      spent.push(...(await Promise.all(pids.slice(at, at + BATCH).map((pid) => readTicks(this.root, pid, this.files)))));
    }
    const { totalTicks: before, cpus } = cpuTicks(statText);
    const after = cpuTicks(await this.files.readText(join(this.root, 'stat'))).totalTicks;
    const ticks = new Map<number, { spent: number; total: number }>();
    pids.forEach((pid, index) => {
      const value = spent[index];
      if (value !== undefined) ticks.set(pid, { spent: value, total: ticksAt(before, after, index, pids.length) });
    });
    return { pids, ticks, cpus, after };
  }

  /**
   * The processes with their CPU share over the `windowMs` that ends with the
   * answer: the ticks of every process now, then a whole reading `windowMs`
   * later, compared. A share since the previous call would depend on who
   * called last (two callers a second and an hour apart got 33 % and 1.7 % of
   * the same busy process).
   */
  async measure(windowMs: number, signal?: AbortSignal): Promise<ProcessTable> {
    this.previous = (await this.ticks()).ticks;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, windowMs);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
    return this.read();
  }

  /**
   * The host's user names, from the root directory of its first process (the
   * container's own /etc/passwd knows none of them). Unreadable without
   * SYS_PTRACE: users are then shown by uid.
   */
  private async userNames(): Promise<Map<number, string>> {
    try {
      return userNames(await this.files.readText(join(this.root, '1', 'root', 'etc', 'passwd')));
    } catch {
      return new Map();
    }
  }
}
