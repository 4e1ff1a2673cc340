import { dgram } from '../../lazy-builtins.ts';

const MDNS_PORT = 5353;
const TYPE_PTR = 12;
const CLASS_IN = 1;

/** `10.0.0.7` → `7.0.0.10.in-addr.arpa`, the name a reverse lookup asks for. */
function reverseName(ip: string): string {
  return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
}

/** A DNS query for the PTR record of one address (RFC 1035 §4.1). */
export function ptrQuery(ip: string, id: number): Buffer {
  const labels = reverseName(ip)
    .split('.')
    .map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'ascii')]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(1, 4);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(TYPE_PTR, 0);
  tail.writeUInt16BE(CLASS_IN, 2);
  return Buffer.concat([header, ...labels, Buffer.from([0]), tail]);
}

/** Reads a possibly compressed domain name at offset; the name and where the record goes on. */
function readName(message: Buffer, start: number): { name: string; next: number } {
  const labels: string[] = [];
  let offset = start;
  let next = -1;
  for (let hops = 0; hops < 64; hops += 1) {
    const length = message[offset];
    if (length === undefined) throw new Error('truncated name');
    if (length === 0) {
      return { name: labels.join('.'), next: next === -1 ? offset + 1 : next };
    }
    if ((length & 0xc0) === 0xc0) {
      if (next === -1) next = offset + 2;
      offset = ((length & 0x3f) << 8) | (message[offset + 1] ?? 0);
      continue;
    }
    labels.push(message.toString('utf8', offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  throw new Error('name pointer loop');
}

/** The PTR answers of a DNS response: the address each names, and the name. */
export function ptrAnswers(message: Buffer): { ip: string; name: string }[] {
  const questions = message.readUInt16BE(4);
  const answers = message.readUInt16BE(6);
  let offset = 12;
  for (let i = 0; i < questions; i += 1) offset = readName(message, offset).next + 4;
  const found: { ip: string; name: string }[] = [];
  for (let i = 0; i < answers; i += 1) {
    const owner = readName(message, offset);
    const type = message.readUInt16BE(owner.next);
    const length = message.readUInt16BE(owner.next + 8);
    const data = owner.next + 10;
    const match = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\.in-addr\.arpa$/i.exec(owner.name);
    if (type === TYPE_PTR && match)
      found.push({ ip: [match[4], match[3], match[2], match[1]].join('.'), name: readName(message, data).name.replace(/\.$/, '') });
    offset = data + length;
  }
  return found;
}

/**
 * Names devices give themselves over multicast DNS: a unicast query for each
 * address's PTR record sent to that device's port 5353 (RFC 6762 §5.5, which a
 * responder answers to the asking port), answers gathered for `waitMs`. Only the
 * given addresses are asked; a device without a responder stays unnamed.
 */
export async function mdnsNames(ips: readonly string[], waitMs: number, signal?: AbortSignal): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (ips.length === 0) return names;
  const wanted = new Set(ips);
  const socket = dgram().createSocket('udp4');
  socket.on('message', (message) => {
    try {
      for (const answer of ptrAnswers(message)) if (wanted.has(answer.ip) && !names.has(answer.ip)) names.set(answer.ip, answer.name);
    } catch {
      // not a DNS answer we can read: ignore it
    }
  });
  socket.on('error', () => undefined);
  try {
    await new Promise<void>((resolve) => socket.bind(0, resolve));
    for (const [index, ip] of ips.entries()) socket.send(ptrQuery(ip, index + 1), MDNS_PORT, ip, () => undefined);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } finally {
    socket.close();
  }
  return names;
}
