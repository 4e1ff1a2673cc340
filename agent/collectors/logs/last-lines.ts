import type { FileHandle } from 'node:fs/promises';

/** A line longer than this is cut: one line never fills an answer. */
export const MAX_LINE_CHARS = 4096;
/** Read back from the end at most this much: a filter that matches little does not read a whole large file. */
export const MAX_SCAN_BYTES = 8 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

/** One line of a file as an answer carries it, cut when too long. */
export function lineOf(raw: string): { text: string; cut: boolean } {
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  return text.length > MAX_LINE_CHARS ? { text: `${text.slice(0, MAX_LINE_CHARS)}…`, cut: true } : { text, cut: false };
}

/**
 * The last `count` lines of a file up to `end` (its size when read) that pass
 * `keep`, oldest first, read backwards in chunks: a log of gigabytes costs
 * what its tail does. `scannedAll` is false when the scan stopped at
 * MAX_SCAN_BYTES before finding as many.
 */
export async function lastLines(
  file: FileHandle,
  end: number,
  count: number,
  keep: (line: string) => boolean,
): Promise<{ lines: string[]; scannedAll: boolean }> {
  const found: string[] = [];
  let position = end;
  // Bytes of a line whose start lies in a chunk not read yet.
  let carry = Buffer.alloc(0);
  let first = true;
  while (position > 0 && found.length < count && end - position < MAX_SCAN_BYTES) {
    const size = Math.min(CHUNK_BYTES, position);
    position -= size;
    const chunk = Buffer.alloc(size);
    await file.read(chunk, 0, size, position);
    let joined = Buffer.concat([chunk, carry]);
    // The bytes before the first newline may continue in the chunk before this one, unless this chunk starts
    // the file: they are kept as bytes, so a character split between chunks is joined whole.
    if (position > 0) {
      const newline = joined.indexOf(0x0a);
      if (newline < 0) {
        carry = joined;
        continue;
      }
      carry = joined.subarray(0, newline);
      joined = joined.subarray(newline + 1);
    } else {
      carry = Buffer.alloc(0);
    }
    const parts = joined.toString('utf8').split('\n');
    // A file that ends with a newline has no line after it.
    if (first && parts[parts.length - 1] === '') parts.pop();
    first = false;
    for (let i = parts.length - 1; i >= 0 && found.length < count; i--) if (keep(parts[i] as string)) found.push(parts[i] as string);
  }
  return { lines: found.reverse(), scannedAll: position === 0 || found.length >= count };
}
