import { readFile } from 'node:fs/promises';

interface Neighbour {
  ip: string;
  mac: string;
  device: string;
}

/** The ARP flag of an entry whose address resolution completed. */
const ATF_COM = 0x2;

/**
 * The kernel's IPv4 neighbours with a resolved MAC, from /proc/net/arp (of the
 * network namespace the agent runs in):
 * `IP address  HW type  Flags  HW address  Mask  Device`.
 */
export async function resolvedNeighbours(file = '/proc/net/arp'): Promise<Neighbour[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 6 && (Number.parseInt(fields[2] ?? '0', 16) & ATF_COM) !== 0 && fields[3] !== '00:00:00:00:00:00')
    .map((fields) => ({ ip: fields[0] as string, mac: (fields[3] as string).toLowerCase(), device: fields[5] as string }));
}
