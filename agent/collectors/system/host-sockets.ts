import { endianness } from 'node:os';
import { join } from 'node:path';
import { processName, procPids } from './host-processes.ts';
import { type ProcFiles, procFiles } from './proc-files.ts';

/** A listening socket of a proc tree's network namespace, with the process that holds it when known. */
export interface ListeningSocket {
  protocol: 'tcp' | 'udp';
  address: string;
  port: number;
  pid: number | null;
  process: string | null;
}

export interface SocketTable {
  sockets: ListeningSocket[];
  /** Processes whose open files could not be read (no SYS_PTRACE, or another user's without DAC_OVERRIDE). */
  refusedProcesses: number;
}

interface TableRow {
  protocol: 'tcp' | 'udp';
  address: string;
  port: number;
  inode: number;
}

/** TCP_LISTEN in the `st` column; an unconnected UDP socket (TCP_CLOSE, 07) is one that receives from anyone. */
const LISTEN = { tcp: '0A', udp: '07' } as const;

/** The kernel prints an address as 32-bit words in the host's byte order. */
function addressBytes(hex: string): Buffer {
  const bytes = Buffer.from(hex, 'hex');
  if (endianness() === 'LE') for (let at = 0; at + 4 <= bytes.length; at += 4) bytes.writeUInt32BE(bytes.readUInt32LE(at), at);
  return bytes;
}

/** An IPv6 address in its short form (RFC 5952), IPv4-mapped ones as `::ffff:a.b.c.d`. */
function formatIpv6(bytes: Buffer): string {
  if (bytes.subarray(0, 10).every((b) => b === 0) && bytes.readUInt16BE(10) === 0xffff) return `::ffff:${[...bytes.subarray(12)].join('.')}`;
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2));
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === 0) length++;
    if (length > bestLength) {
      bestStart = start;
      bestLength = length;
    }
  }
  const hex = (list: number[]) => list.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/** The kernel's range of ports it hands to sockets that bind none themselves (ip_local_port_range). */
interface PortRange {
  low: number;
  high: number;
}

/**
 * The listening rows of one of /proc/PID/net/{tcp,tcp6,udp,udp6}. A UDP
 * socket on a port of the ephemeral range is a client's (a resolver, a QUIC
 * or mDNS client sending without connect): the kernel picked its port, so
 * nothing could be told to send there, and it is not a listener.
 */
function parseSocketTable(text: string, protocol: 'tcp' | 'udp', ephemeral: PortRange | undefined): TableRow[] {
  const rows: TableRow[] = [];
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    const [local, , state] = fields.slice(1, 4);
    const inode = Number(fields[9]);
    if (!local || state !== LISTEN[protocol] || !Number.isInteger(inode)) continue;
    const [addressHex = '', portHex = ''] = local.split(':');
    const port = Number.parseInt(portHex, 16);
    if (protocol === 'udp' && ephemeral && port >= ephemeral.low && port <= ephemeral.high) continue;
    const bytes = addressBytes(addressHex);
    rows.push({ protocol, address: bytes.length === 4 ? [...bytes].join('.') : formatIpv6(bytes), port, inode });
  }
  return rows;
}

/** The ephemeral port range of a proc tree's kernel; undefined when it cannot be read (then no UDP socket is left out). */
async function ephemeralPorts(root: string, files: ProcFiles): Promise<PortRange | undefined> {
  const text = await files.readText(join(root, 'sys', 'net', 'ipv4', 'ip_local_port_range')).catch(() => '');
  const [low, high] = text.trim().split(/\s+/).map(Number);
  return low && high && low <= high ? { low, high } : undefined;
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? '';
const REFUSED = new Set(['EACCES', 'EPERM']);

/** The socket inodes a process holds, 'refused' when its open files may not be read, [] when it is gone. */
async function socketInodes(root: string, pid: number, files: ProcFiles): Promise<number[] | 'refused'> {
  const dir = join(root, String(pid), 'fd');
  let fds: string[];
  try {
    fds = await files.list(dir);
  } catch (error) {
    return REFUSED.has(codeOf(error)) ? 'refused' : [];
  }
  const links = await Promise.all(fds.map((fd) => files.readLink(join(dir, fd)).catch((error: unknown) => (REFUSED.has(codeOf(error)) ? null : ''))));
  if (links.includes(null)) return 'refused';
  return links.flatMap((link) => {
    const inode = /^socket:\[(\d+)\]$/.exec(link ?? '')?.[1];
    return inode ? [Number(inode)] : [];
  });
}

/** Processes whose descriptors are read at once while looking for socket owners. */
const BATCH = 32;

/**
 * The listening sockets of the network namespace of a proc tree's process
 * `namespaceOf` (its first process by default), and who holds each. With the
 * host's /proc mounted into a container that is the host's namespace:
 * `<root>/net` would not do, it is a link to `self/net`, the agent's own
 * namespace; an agent on the host itself reads its own (`self`). Owners are
 * found as `ss -p` finds them, by the socket inode among each process's open
 * files; of several holders (forked workers) the lowest pid is named.
 */
export async function readHostSockets(root: string, files: ProcFiles = procFiles, namespaceOf = '1'): Promise<SocketTable> {
  const ephemeral = await ephemeralPorts(root, files);
  const tables: [string, 'tcp' | 'udp'][] = [
    ['tcp', 'tcp'],
    ['tcp6', 'tcp'],
    ['udp', 'udp'],
    ['udp6', 'udp'],
  ];
  const rows = (
    await Promise.all(
      tables.map(async ([file, protocol]) => {
        try {
          return parseSocketTable(await files.readText(join(root, namespaceOf, 'net', file)), protocol, ephemeral);
        } catch (error) {
          // A kernel without IPv6 has no tcp6 or udp6; the IPv4 tables are always there.
          if (codeOf(error) === 'ENOENT' && file.endsWith('6')) return [];
          throw error;
        }
      }),
    )
  ).flat();
  const owners = new Map<number, number>();
  const wanted = new Set(rows.map((row) => row.inode));
  let refusedProcesses = 0;
  const pids = (await procPids(root, files)).sort((a, b) => a - b);
  for (let at = 0; at < pids.length && owners.size < wanted.size; at += BATCH) {
    const batch = pids.slice(at, at + BATCH);
    const held = await Promise.all(batch.map((pid) => socketInodes(root, pid, files)));
    held.forEach((inodes, index) => {
      if (inodes === 'refused') {
        refusedProcesses++;
        return;
      }
      for (const inode of inodes) if (wanted.has(inode) && !owners.has(inode)) owners.set(inode, batch[index] as number);
    });
  }
  const names = new Map<number, string>();
  for (const pid of new Set(owners.values())) {
    const [comm, cmdline] = await Promise.all([
      files.readText(join(root, String(pid), 'comm')).catch(() => ''),
      files.readText(join(root, String(pid), 'cmdline')).catch(() => ''),
    ]);
    const name = processName(comm.trim(), cmdline);
    if (name) names.set(pid, name);
  }
  const sockets = rows.map(({ protocol, address, port, inode }): ListeningSocket => {
    const pid = owners.get(inode) ?? null;
    return { protocol, address, port, pid, process: pid === null ? null : (names.get(pid) ?? null) };
  });
  return { sockets, refusedProcesses };
}
