import { readFileSync, statfsSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import type { HostSample } from '../../shared/catalog/sample.ts';

/** Filesystems worth watching for fullness; the rest (proc, tmpfs, overlay…) are not disks. */
const DISK_FS_TYPES = new Set(['ext2', 'ext3', 'ext4', 'xfs', 'btrfs', 'zfs', 'f2fs', 'jfs', 'reiserfs', 'vfat', 'exfat', 'ntfs', 'ntfs3', 'fuseblk']);

function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const cpu of cpus()) {
    idle += cpu.times.idle;
    total += cpu.times.user + cpu.times.nice + cpu.times.sys + cpu.times.irq + cpu.times.idle;
  }
  return { idle, total };
}

function memory(): { used: number; total: number } {
  try {
    const text = readFileSync('/proc/meminfo', 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN) * 1024;
    const total = kb('MemTotal');
    const available = kb('MemAvailable');
    if (Number.isFinite(total) && Number.isFinite(available)) return { used: total - available, total };
  } catch {
    // Not Linux: fall back to what Node knows.
  }
  return { used: totalmem() - freemem(), total: totalmem() };
}

/** Mount points of real disks, from /proc/mounts (root always included). */
export function diskMounts(mountsText?: string): string[] {
  let text = mountsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/mounts', 'utf8');
    } catch {
      return ['/'];
    }
  }
  const mounts = new Set<string>(['/']);
  for (const line of text.split('\n')) {
    const [, mount, fsType] = line.split(' ');
    if (mount && fsType && DISK_FS_TYPES.has(fsType) && !mount.startsWith('/snap/')) mounts.add(mount.replace(/\\040/g, ' '));
  }
  return [...mounts];
}

function fullestDisk(mounts: string[]): { percent: number; mount: string } | undefined {
  let fullest: { percent: number; mount: string } | undefined;
  for (const mount of mounts) {
    try {
      const stats = statfsSync(mount);
      const total = stats.blocks * stats.bsize;
      if (total === 0) continue;
      const used = (stats.blocks - stats.bfree) * stats.bsize;
      const usable = used + stats.bavail * stats.bsize;
      const percent = usable > 0 ? (used / usable) * 100 : 0;
      if (!fullest || percent > fullest.percent) fullest = { percent, mount };
    } catch {
      // A mount we may not stat (permissions, gone): skip it.
    }
  }
  return fullest;
}

/** Extra figures a collector adds to every sample (container counts from the docker collector, …). */
export type SampleContributor = () => Partial<HostSample>;

/**
 * The cheap host figures every heartbeat carries: CPU since the previous
 * sample, memory, the fullest disk and the load average. Sampled in the
 * background, so a heartbeat or a call never waits for it.
 */
export class HostSampler {
  private previousCpu = cpuTimes();
  private latest: HostSample | undefined;
  private timer: NodeJS.Timeout | undefined;
  private mounts = diskMounts();
  private readonly contributors: SampleContributor[] = [];

  constructor(private readonly intervalMs = 5000) {}

  start(): void {
    this.take();
    this.timer = setInterval(() => this.take(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  addContributor(contributor: SampleContributor): void {
    this.contributors.push(contributor);
  }

  /** The latest sample (taking one if none is there yet). */
  current(): HostSample {
    return this.latest ?? this.take();
  }

  take(): HostSample {
    const cpu = cpuTimes();
    const idle = cpu.idle - this.previousCpu.idle;
    const total = cpu.total - this.previousCpu.total;
    this.previousCpu = cpu;
    const mem = memory();
    const disk = fullestDisk(this.mounts);
    const sample: HostSample = {
      cpu_percent: total > 0 ? round1(((total - idle) / total) * 100) : null,
      memory_percent: mem.total > 0 ? round1((mem.used / mem.total) * 100) : null,
      memory_used_bytes: mem.used,
      memory_total_bytes: mem.total,
      disk_percent: disk ? round1(disk.percent) : null,
      disk_mount: disk?.mount ?? null,
      load_1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
      containers_running: null,
      containers_total: null,
      sampled_at_unix_ms: Date.now(),
    };
    for (const contribute of this.contributors) Object.assign(sample, contribute());
    this.latest = sample;
    return sample;
  }

  /** Re-reads the mount table (mounts come and go). */
  refreshMounts(): void {
    this.mounts = diskMounts();
  }
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
