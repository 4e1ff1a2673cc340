import { createRequire } from 'node:module';
import type si from 'systeminformation';

/** The slice of systeminformation the system collector uses on demand (a test may pass a fake). */
export type SystemInfo = Pick<typeof si, 'processes' | 'networkConnections' | 'osInfo' | 'cpu'>;

let loaded: SystemInfo | undefined;

/**
 * The systeminformation functions the agent uses, required from their own
 * files: the package's index loads every part of it (Bluetooth vendors,
 * printers, Wi-Fi, VirtualBox, USB, audio…) for 1.4 MiB of an idle agent's
 * memory the agent never reads (docs/performance.md). The index adds nothing
 * else on Linux.
 */
export function systemInfo(): SystemInfo {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const part = (name: string) => require(`systeminformation/lib/${name}.js`);
  const cpu = part('cpu');
  const osInfo = part('osinfo');
  loaded = {
    cpu: cpu.cpu,
    networkConnections: part('network').networkConnections,
    osInfo: osInfo.osInfo,
    processes: part('processes').processes,
  };
  return loaded;
}
