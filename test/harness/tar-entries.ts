/** One entry of a tar archive as the fake engine writes and reads them: a folder, or a file with its bytes. */
export interface TarEntry {
  path: string;
  /** Absent for a folder. */
  content?: Buffer;
}

const BLOCK = 512;

function header(entry: TarEntry): Buffer {
  const block = Buffer.alloc(BLOCK);
  const folder = entry.content === undefined;
  const name = folder && !entry.path.endsWith('/') ? `${entry.path}/` : entry.path;
  if (Buffer.byteLength(name) > 100) throw new Error(`tar entry names over 100 bytes are not written by the fake: ${name}`);
  block.write(name, 0, 'utf8');
  block.write(`${(folder ? 0o755 : 0o644).toString(8).padStart(7, '0')}\0`, 100, 'ascii');
  block.write('0000000\0', 108, 'ascii');
  block.write('0000000\0', 116, 'ascii');
  block.write(`${(entry.content?.length ?? 0).toString(8).padStart(11, '0')}\0`, 124, 'ascii');
  block.write(
    `${Math.floor(Date.now() / 1000)
      .toString(8)
      .padStart(11, '0')}\0`,
    136,
    'ascii',
  );
  block.write(folder ? '5' : '0', 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  // The checksum is taken with its own field read as spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** A ustar archive of the entries, in order, ending with the two empty blocks tar writes. */
export function tarOf(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    parts.push(header(entry));
    if (entry.content) {
      parts.push(entry.content);
      const pad = (BLOCK - (entry.content.length % BLOCK)) % BLOCK;
      if (pad) parts.push(Buffer.alloc(pad));
    }
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

/** The folders and regular files of a ustar archive (other entry types, such as PAX headers, are skipped). */
export function entriesOf(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const block = tar.subarray(offset, offset + BLOCK);
    if (block.every((byte) => byte === 0)) break;
    const field = (start: number, length: number) =>
      block
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const prefix = field(345, 155);
    const path = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1) || '0';
    const body = offset + BLOCK;
    if (type === '5') entries.push({ path });
    else if (type === '0') entries.push({ path, content: Buffer.from(tar.subarray(body, body + size)) });
    offset = body + Math.ceil(size / BLOCK) * BLOCK;
  }
  return entries;
}
