import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../test/harness/temp-dir.ts';
import { ProcReadings } from './proc-readings.ts';

describe('CPU, memory and disks read from /proc and statfs', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let proc: string;
  beforeEach(() => {
    temp = makeTempDir('fleetmesh-proc-');
    proc = temp.path;
    mkdirSync(join(proc, 'self'));
  });
  afterEach(() => temp.remove());

  const stat = (user: number, system: number, idle: number, iowait: number) =>
    writeFileSync(join(proc, 'stat'), `cpu  ${user} 0 ${system} ${idle} ${iowait} 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n`);

  it('gives CPU busy since the previous reading, idle and iowait counted as idle', async () => {
    const readings = new ProcReadings(proc);
    stat(100, 100, 700, 100);
    expect(await readings.cpuPercent()).toBe(20);
    stat(160, 120, 800, 120);
    // 80 of 200 ticks busy since the first reading.
    expect(await readings.cpuPercent()).toBe(40);
    stat(160, 120, 800, 120);
    expect(await readings.cpuPercent()).toBe(0);
  });

  it('gives total and available memory in bytes, free and cache where the kernel has no MemAvailable', async () => {
    writeFileSync(
      join(proc, 'meminfo'),
      'MemTotal:        8000000 kB\nMemFree:         1000000 kB\nMemAvailable:    3000000 kB\nCached:          1500000 kB\n',
    );
    expect(await new ProcReadings(proc).memory()).toEqual({ total_bytes: 8_192_000_000, available_bytes: 3_072_000_000 });
    writeFileSync(join(proc, 'meminfo'), 'MemTotal:        8000000 kB\nMemFree:         1000000 kB\nCached:          1500000 kB\n');
    expect(await new ProcReadings(proc).memory()).toEqual({ total_bytes: 8_192_000_000, available_bytes: 2_560_000_000 });
  });

  it('lists each disk filesystem once with its usage as df counts it, and skips what is not a disk or cannot be read', async () => {
    writeFileSync(
      join(proc, 'self', 'mounts'),
      [
        'overlay / overlay rw 0 0',
        'proc /proc proc rw 0 0',
        'tmpfs /run tmpfs rw 0 0',
        '/dev/vda1 /data ext4 rw 0 0',
        '/dev/vda1 /srv/bind ext4 rw 0 0',
        '/dev/vdb /mnt/my\\040disk xfs rw 0 0',
        '/dev/vdc /gone ext4 rw 0 0',
        '',
      ].join('\n'),
    );
    const asked: string[] = [];
    const readings = new ProcReadings(proc, async (path) => {
      asked.push(path);
      if (path === '/gone') throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      // 1000 blocks of 4 KiB: 600 free, 550 of them a user may fill.
      return path === '/data' ? { bsize: 4096, blocks: 1000, bfree: 600, bavail: 550 } : { bsize: 1024, blocks: 100, bfree: 100, bavail: 100 };
    });
    expect(await readings.disks()).toEqual([
      { mount: '/data', fs_type: 'ext4', total_bytes: 4_096_000, used_bytes: 1_638_400, usage_percent: 42.1 },
      { mount: '/mnt/my disk', fs_type: 'xfs', total_bytes: 102_400, used_bytes: 0, usage_percent: 0 },
    ]);
    expect(asked).toEqual(['/data', '/mnt/my disk', '/gone']);
  });

  it("reads this machine's own figures", async () => {
    const readings = new ProcReadings();
    const cpu = await readings.cpuPercent();
    expect(cpu).toBeGreaterThanOrEqual(0);
    expect(cpu).toBeLessThanOrEqual(100);
    const memory = await readings.memory();
    expect(memory.total_bytes).toBe(totalmem());
    expect(memory.available_bytes).toBeGreaterThan(0);
    expect(memory.available_bytes).toBeLessThanOrEqual(memory.total_bytes);
    const mounts = readFileSync('/proc/self/mounts', 'utf8');
    for (const disk of await readings.disks()) {
      expect(mounts).toContain(` ${disk.mount.replace(/ /g, '\\040')} ${disk.fs_type} `);
      expect(disk.used_bytes).toBeLessThanOrEqual(disk.total_bytes);
    }
  });
});
