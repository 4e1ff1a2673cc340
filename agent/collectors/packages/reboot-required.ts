import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Whether the host waits for a reboot: Debian's and Ubuntu's packages create
 * /var/run/reboot-required when an update needs one (a kernel, libc) and list
 * themselves in reboot-required.pkgs.
 */
export async function rebootRequired(root: string): Promise<{ required: boolean; packages: string[] }> {
  const dirs = ['run', 'var/run'].map((dir) => join(root, dir));
  for (const dir of dirs) {
    try {
      await readFile(join(dir, 'reboot-required'));
    } catch {
      continue;
    }
    const listed = await readFile(join(dir, 'reboot-required.pkgs'), 'utf8').catch(() => '');
    return {
      required: true,
      packages: [
        ...new Set(
          listed
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean),
        ),
      ],
    };
  }
  return { required: false, packages: [] };
}
