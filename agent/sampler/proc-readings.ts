import { readFile, statfs } from 'node:fs/promises';

/** Filesystems worth watching for fullness; the rest (overlay, tmpfs, proc…) are not disks. */
const DISK_FS_TYPES = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'zfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'vfat',
  'exfat',
  'ntfs',
  'ntfs3',
  'fuseblk',
  'apfs',
  'hfs',
]);

export interface Disk {
  mount: string;
  fs_type: string;
  total_bytes: number;
  used_bytes: number;
  usage_percent: number;
}

/** The figures the sampler reads every few seconds, for every heartbeat. */
export interface CheapReadings {
  /** CPU busy since the previous reading (since boot for the first), in percent; null when unreadable. */
  cpuPercent(): Promise<number | null>;
  memory(): Promise<{ total_bytes: number; available_bytes: number }>;
  disks(): Promise<Disk[]>;
}

type StatFs = (path: string) => Promise<{ bsize: number; blocks: number; bfree: number; bavail: number }>;

const round1 = (value: number) => Math.round(value * 10) / 10;

/** A mount point as /proc/mounts writes it: space, tab, newline and backslash as octal escapes. */
function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * CPU, memory and disks read straight from /proc and statfs(2): a few file
 * reads, no child process. (systeminformation runs `cat /proc/stat | grep`,
 * `cat /proc/mounts` and `df` in shells on every sample: a fork of the agent
 * per figure, every few seconds, on every host of the fleet.)
 */
export class ProcReadings implements CheapReadings {
  private lastCpu: { total: number; idle: number } | undefined;

  constructor(
    private readonly proc = '/proc',
    private readonly statFs: StatFs = statfs,
  ) {}

  async cpuPercent(): Promise<number | null> {
    const line = (await readFile(`${this.proc}/stat`, 'utf8')).split('\n', 1)[0] ?? '';
    const fields = line.trim().split(/\s+/);
    if (fields[0] !== 'cpu') return null;
    // user nice system idle iowait irq softirq steal (guest time is already in user and nice).
    const ticks = fields.slice(1, 9).map(Number);
    if (ticks.length < 4 || ticks.some((n) => !Number.isFinite(n))) return null;
    const total = ticks.reduce((sum, n) => sum + n, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    const last = this.lastCpu ?? { total: 0, idle: 0 };
    this.lastCpu = { total, idle };
    const spent = total - last.total;
    if (spent <= 0) return last.total === 0 ? null : 0;
    return round1(Math.min(100, Math.max(0, ((spent - (idle - last.idle)) / spent) * 100)));
  }

  async memory(): Promise<{ total_bytes: number; available_bytes: number }> {
    const kib = (name: string, text: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1] ?? Number.NaN) * 1024;
    const text = await readFile(`${this.proc}/meminfo`, 'utf8');
    const total = kib('MemTotal', text);
    if (!Number.isFinite(total)) throw new Error(`${this.proc}/meminfo has no MemTotal`);
    // Kernels before 3.14 have no MemAvailable: free memory and the page cache then.
    const available = kib('MemAvailable', text);
    return { total_bytes: total, available_bytes: Number.isFinite(available) ? available : kib('MemFree', text) + (kib('Cached', text) || 0) };
  }

  async disks(): Promise<Disk[]> {
    const seen = new Set<string>();
    const mounts: { device: string; mount: string; type: string }[] = [];
    for (const line of (await readFile(`${this.proc}/self/mounts`, 'utf8')).split('\n')) {
      const [device, mount, type] = line.split(' ');
      if (!device || !mount || !type || !DISK_FS_TYPES.has(type)) continue;
      // One filesystem mounted twice (bind mounts) counts once.
      if (seen.has(device)) continue;
      seen.add(device);
      mounts.push({ device, mount: unescapeMount(mount), type });
    }
    const disks = await Promise.all(
      mounts.map(async ({ mount, type }): Promise<Disk | undefined> => {
        try {
          const s = await this.statFs(mount);
          const total = s.blocks * s.bsize;
          const used = (s.blocks - s.bfree) * s.bsize;
          const avail = s.bavail * s.bsize;
          if (total <= 0) return undefined;
          // As df counts it: what is used of what a user may fill (the root-reserved blocks left out).
          return { mount, fs_type: type, total_bytes: total, used_bytes: used, usage_percent: used + avail > 0 ? round1((used / (used + avail)) * 100) : 0 };
        } catch {
          // Unmounted meanwhile, or not ours to read.
          return undefined;
        }
      }),
    );
    return disks.filter((disk): disk is Disk => disk !== undefined);
  }
}
