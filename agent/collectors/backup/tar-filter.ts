import { Transform, type TransformCallback } from 'node:stream';

const BLOCK = 512;

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

/** A header's size field: octal, or big-endian base-256 when its high bit is set (files over 8 GiB). */
function entrySize(header: Buffer): number {
  if (((header[124] ?? 0) & 0x80) !== 0) {
    let size = 0;
    for (let i = 125; i < 136; i++) size = size * 256 + (header[i] ?? 0);
    return size;
  }
  return Number.parseInt(field(header, 124, 12).trim() || '0', 8);
}

/** The `path` record of a PAX extended header, when it has one. */
function paxPath(data: Buffer): string | undefined {
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number.parseInt(data.subarray(offset, space).toString('ascii'), 10);
    if (!(length > 0)) break;
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    if (record.startsWith('path=')) return record.slice(5);
    offset += length;
  }
  return undefined;
}

/** tar --exclude's globs: `*` and `?` within one path segment, `**` across them. */
function globPattern(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i] as string;
    if (char === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/**
 * Passes a tar stream on without the entries an exclude pattern matches, and
 * counts what it kept and dropped. A pattern matches a path inside a volume
 * (the archive's first `depth` segments are the volume's place), any of its
 * parent directories (so excluding `cache` drops what is in it), or, without a
 * slash, any file name. PAX and GNU long-name headers travel with their entry.
 */
export class TarFilter extends Transform {
  entries = 0;
  excluded = 0;
  private buffer: Buffer = Buffer.alloc(0);
  /** Extension headers (PAX, GNU long names) waiting for the entry they describe. */
  private held: Buffer[] = [];
  private heldPath: string | undefined;
  private remaining = 0;
  private dropping = false;
  private ended = false;
  /** Each pattern, and whether it may match a file name alone (it has no slash). */
  private readonly patterns: { regex: RegExp; byName: boolean }[];

  constructor(
    exclude: readonly string[],
    private readonly depth: number,
  ) {
    super();
    this.patterns = exclude.map((glob) => {
      const trimmed = glob.replace(/^\.?\/+/, '').replace(/\/+$/, '');
      return { regex: globPattern(trimmed), byName: !trimmed.includes('/') };
    });
  }

  private isExcluded(path: string): boolean {
    const inside = path.split('/').filter(Boolean).slice(this.depth);
    if (inside.length === 0 || this.patterns.length === 0) return false;
    for (let end = 1; end <= inside.length; end++) {
      const prefix = inside.slice(0, end).join('/');
      const name = inside[end - 1] as string;
      if (this.patterns.some((pattern) => pattern.regex.test(prefix) || (pattern.byName && pattern.regex.test(name)))) return true;
    }
    return false;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    this.drain();
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.buffer.length) this.push(this.buffer);
    done();
  }

  private drain(): void {
    for (;;) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, this.buffer.length);
        if (take === 0) return;
        if (!this.dropping) this.push(this.buffer.subarray(0, take));
        this.buffer = this.buffer.subarray(take);
        this.remaining -= take;
        continue;
      }
      if (this.ended) {
        if (this.buffer.length) this.push(this.buffer);
        this.buffer = Buffer.alloc(0);
        return;
      }
      if (this.buffer.length < BLOCK) return;
      const header = this.buffer.subarray(0, BLOCK);
      if (header.every((byte) => byte === 0)) {
        this.ended = true;
        continue;
      }
      const size = entrySize(header);
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      const type = String.fromCharCode(header[156] ?? 0);
      if (type === 'x' || type === 'L' || type === 'K') {
        if (this.buffer.length < BLOCK + padded) return;
        const data = this.buffer.subarray(BLOCK, BLOCK + size);
        if (type === 'x') this.heldPath = paxPath(data) ?? this.heldPath;
        else if (type === 'L') this.heldPath = field(data, 0, data.length);
        this.held.push(Buffer.from(this.buffer.subarray(0, BLOCK + padded)));
        this.buffer = this.buffer.subarray(BLOCK + padded);
        continue;
      }
      const prefix = field(header, 345, 155);
      const path = this.heldPath ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
      const drop = this.isExcluded(path);
      if (drop) this.excluded++;
      else {
        this.entries++;
        for (const extension of this.held) this.push(extension);
        this.push(Buffer.from(header));
      }
      this.held = [];
      this.heldPath = undefined;
      this.buffer = this.buffer.subarray(BLOCK);
      this.remaining = padded;
      this.dropping = drop;
    }
  }
}
