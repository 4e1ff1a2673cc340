import { createRequire } from 'node:module';
import type si from 'systeminformation';

/** The slice of systeminformation the system collector uses on demand (a test may pass a fake). */
export type SystemInfo = Pick<typeof si, 'processes' | 'networkConnections' | 'osInfo' | 'cpu'>;

/**
 * The systeminformation functions the agent uses, each required from its own
 * file at its first call: the package's index loads every part of it
 * (Bluetooth vendors, printers, Wi-Fi, VirtualBox, USB, audio…) for 1.4 MiB
 * of an idle agent's memory the agent never reads, and even the four parts it
 * calls hold 6.9 MiB that an agent nobody asks for processes, sockets or its
 * OS never needs (docs/performance.md). The index adds nothing else on Linux.
 */
export function systemInfo(): SystemInfo {
  const require = createRequire(import.meta.url);
  /** A function of one file of the package, required when first called (require keeps the file). */
  const lazy = <K extends keyof SystemInfo>(file: string, name: K) =>
    ((...args: unknown[]) => require(`systeminformation/lib/${file}.js`)[name](...args)) as SystemInfo[K];
  return {
    cpu: lazy('cpu', 'cpu'),
    networkConnections: lazy('network', 'networkConnections'),
    osInfo: lazy('osinfo', 'osInfo'),
    processes: lazy('processes', 'processes'),
  };
}
