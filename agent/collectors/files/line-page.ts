import type { FileHandle } from 'node:fs/promises';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { SecretRedactor } from './secret-redactor.ts';

const CHUNK_BYTES = 64 * 1024;
/** A line longer than this is cut: a minified bundle or a one-line JSON dump is not read here. */
const MAX_LINE_CHARS = 4096;
/** An answer holds at most this much line text (DESIGN §7: page rather than send a large default answer). */
const MAX_PAGE_CHARS = 32 * 1024;

export interface LinePage {
  lines: { n: number; text: string }[];
  /** Where the next page starts; null when the file (or what may be read of it) ends here. */
  nextLine: number | null;
  redacted: number;
  truncatedReason?: string;
}

interface PageRequest {
  fromLine: number;
  lines: number;
  sizeBytes: number;
  /** Nothing past this many bytes from the start is read. */
  maxBytes: number;
  showSecrets: boolean;
  signal: AbortSignal;
  /** The path as asked, for messages. */
  path: string;
}

/**
 * One page of a text file's lines, read from its start (a page further in
 * costs reading up to it, within `maxBytes`). Every line before the page goes
 * through the redactor too, so a private key begun above the page stays hidden
 * in it. A NUL byte anywhere read makes the file binary, which is refused.
 */
export async function readLinePage(handle: FileHandle, request: PageRequest): Promise<LinePage> {
  const buffer = Buffer.alloc(CHUNK_BYTES);
  const decoder = new TextDecoder('utf-8');
  const redactor = request.showSecrets ? undefined : new SecretRedactor();
  const lines: LinePage['lines'] = [];
  let position = 0;
  let carry = '';
  /** The line being read is already past MAX_LINE_CHARS: the rest of it is dropped up to its end. */
  let overlong = false;
  let lineNumber = 0;
  let pageChars = 0;
  let redacted = 0;
  let cut = 0;
  let full: 'lines' | 'chars' | undefined;

  const take = (raw: string) => {
    lineNumber += 1;
    let text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const long = overlong || text.length > MAX_LINE_CHARS;
    if (long) text = `${text.slice(0, MAX_LINE_CHARS)}…`;
    const before = redactor?.count ?? 0;
    if (redactor) text = redactor.line(text);
    if (lineNumber < request.fromLine) return;
    if (long) cut += 1;
    redacted += (redactor?.count ?? 0) - before;
    lines.push({ n: lineNumber, text });
    pageChars += text.length;
    if (lines.length >= request.lines) full = 'lines';
    else if (pageChars >= MAX_PAGE_CHARS) full = 'chars';
  };

  while (!full && position < request.maxBytes) {
    request.signal.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, request.maxBytes - position), position);
    if (bytesRead === 0) break;
    const nul = buffer.subarray(0, bytesRead).indexOf(0);
    if (nul >= 0) {
      throw new FleetError('unsupported', `${request.path} is binary (a NUL byte at offset ${position + nul}): file_read shows text only`, {
        hint: 'file_stat gives its size, owner and times.',
      });
    }
    position += bytesRead;
    carry += decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
    let start = 0;
    for (let end = carry.indexOf('\n'); end >= 0 && !full; end = carry.indexOf('\n', start)) {
      take(carry.slice(start, end));
      overlong = false;
      start = end + 1;
    }
    carry = carry.slice(start);
    if (!full && carry.length > MAX_LINE_CHARS) {
      carry = carry.slice(0, MAX_LINE_CHARS + 1);
      overlong = true;
    }
  }

  const readAll = position >= request.sizeBytes;
  let nextLine: number | null = null;
  let truncatedReason: string | undefined;
  if (full) {
    if (carry !== '' || !readAll) nextLine = lineNumber + 1;
    if (full === 'chars') truncatedReason = `a page holds at most ${MAX_PAGE_CHARS} characters of lines: call again with from_line ${nextLine}`;
  } else if (readAll) {
    const last = carry + decoder.decode();
    if (last !== '') take(last);
  } else {
    // Stopped at maxBytes: the line cut there is not shown half.
    truncatedReason = `the file is ${request.sizeBytes} bytes; this host reads no more than its first ${request.maxBytes} bytes (--file-max-kib), ending at line ${lineNumber}`;
  }
  if (cut) truncatedReason = [truncatedReason, `${cut} line${cut === 1 ? '' : 's'} longer than ${MAX_LINE_CHARS} characters cut`].filter(Boolean).join('; ');
  return { lines, nextLine, redacted, ...(truncatedReason ? { truncatedReason } : {}) };
}
