import { createReadStream } from 'node:fs';

/**
 * Reads a file of RFC 822-style stanzas (dpkg's status, apt's Packages lists)
 * piece by piece, handing each stanza's single-line fields to `take`: an index
 * of tens of megabytes is never held whole. Continuation lines (a
 * description's) are skipped, since no field read here spans lines. `wanted`
 * limits the fields kept. Lines are split here rather than by `node:readline`,
 * which an idle agent would otherwise load for this alone (the packages
 * collector reads dpkg's status as it starts).
 */
export async function readStanzas(path: string, wanted: readonly string[], take: (fields: Record<string, string>) => void): Promise<void> {
  let fields: Record<string, string> = {};
  const flush = () => {
    if (Object.keys(fields).length) take(fields);
    fields = {};
  };
  const line = (raw: string) => {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text === '') {
      flush();
      return;
    }
    if (text.startsWith(' ') || text.startsWith('\t')) return;
    const colon = text.indexOf(':');
    if (colon <= 0) return;
    const name = text.slice(0, colon);
    if (wanted.includes(name)) fields[name] = text.slice(colon + 1).trim();
  };
  let rest = '';
  for await (const chunk of createReadStream(path, { encoding: 'utf8' }) as AsyncIterable<string>) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const text of lines) line(text);
  }
  if (rest !== '') line(rest);
  flush();
}
