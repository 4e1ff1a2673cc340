import { readFileSync } from 'node:fs';
import { release } from 'node:os';
import { describe, expect, it } from 'vitest';
import { readRunningSystem, rebootRequired } from './reboot-required.ts';

describe('rebootRequired', () => {
  it('reads the boot time and kernel release uname and /proc/stat give', async () => {
    const running = await readRunningSystem();
    expect(running.kernelRelease).toBe(release());
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    expect(running.bootUnixMs).toBe(btime * 1000);
  });

  it('has an Alpine host wait for a reboot when its kernel package is not the running release', async () => {
    const kernel = (version: string) => [
      { name: 'linux-lts', version, architecture: 'x86_64' },
      { name: 'linux-firmware-none', version: '20240811-r0', architecture: 'x86_64' },
    ];
    const running = { bootUnixMs: 0, kernelRelease: '6.6.58-0-lts' };
    expect(await rebootRequired('/nonexistent', 'apk', kernel('6.6.58-r0'), running)).toEqual({ required: false, packages: [] });
    expect(await rebootRequired('/nonexistent', 'apk', kernel('6.6.62-r1'), running)).toEqual({ required: true, packages: ['linux-lts'] });
    // A kernel of another flavor than the one running is not the one booted.
    expect(await rebootRequired('/nonexistent', 'apk', [{ name: 'linux-virt', version: '6.6.62-r1', architecture: null }], running)).toEqual({
      required: false,
      packages: [],
    });
  });
});
