/** The 512-byte blocks of a tar archive: a header, then the file's data padded to a whole block. */
const BLOCK = 512;

/**
 * One regular file's content from an uncompressed tar archive (ustar or
 * GNU), by its name; undefined when the archive has none. apk's signed
 * indexes are two archives one after the other (the signature's, then the
 * index's), the first without the end blocks: reading on from header to
 * header finds the index's files as well.
 */
export function tarFile(archive: Buffer, name: string): Buffer | undefined {
  let at = 0;
  while (at + BLOCK <= archive.length) {
    const header = archive.subarray(at, at + BLOCK);
    // An all-zero block ends an archive; a later one may follow it.
    if (header.every((byte) => byte === 0)) {
      at += BLOCK;
      continue;
    }
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('latin1')
        .replace(/\0.*$/s, '');
    const prefix = field(345, 155);
    const entry = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const data = at + BLOCK;
    if ((type === '0' || type === '') && entry.replace(/^\.\//, '') === name) return archive.subarray(data, data + size);
    at = data + Math.ceil(size / BLOCK) * BLOCK;
  }
  return undefined;
}
