import { readFileSync } from 'node:fs';

/**
 * The kernel's count of connections its listen queues dropped, from
 * /proc/net/netstat (every listener of this network namespace, not only the
 * broker's): `ListenOverflows` (accept queue full) and `ListenDrops` (every
 * drop, those included). NaN where the file cannot be read.
 */
export function listenDrops(): { overflows: number; drops: number } {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
    const header = lines.findIndex((line) => line.startsWith('TcpExt:'));
    const names = (lines[header] ?? '').split(/\s+/);
    const values = (lines[header + 1] ?? '').split(/\s+/).map(Number);
    const value = (name: string) => values[names.indexOf(name)] ?? Number.NaN;
    return { overflows: value('ListenOverflows'), drops: value('ListenDrops') };
  } catch {
    return { overflows: Number.NaN, drops: Number.NaN };
  }
}
