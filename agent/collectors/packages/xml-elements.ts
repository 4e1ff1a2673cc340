import type { Readable } from 'node:stream';

/** Where the last `<tag` (then a space or `>`: not `<packager>` for `package`) before `end` starts, or -1. */
function lastOpening(text: string, tag: string, end: number): number {
  let found = -1;
  for (const match of text.slice(0, end).matchAll(new RegExp(`<${tag}[\\s>]`, 'g'))) found = match.index;
  return found;
}

/** Calls `each` with every element `<tag …>…</tag>` of an XML file, read as it streams (a distribution's primary.xml is tens of MB). */
export async function xmlElements(stream: Readable, tag: string, each: (element: string) => void): Promise<void> {
  const close = `</${tag}>`;
  let pending = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) {
    pending += chunk as string;
    let end = pending.indexOf(close);
    while (end >= 0) {
      const start = lastOpening(pending, tag, end);
      if (start >= 0) each(pending.slice(start, end + close.length));
      pending = pending.slice(end + close.length);
      end = pending.indexOf(close);
    }
    // Keep only what may start the next element (its opening may be cut between chunks).
    const next = lastOpening(pending, tag, pending.length);
    pending = next >= 0 ? pending.slice(next) : pending.slice(-(tag.length + 2));
  }
}
