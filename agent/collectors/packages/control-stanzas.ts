import { createReadStream } from 'node:fs';
import { readline } from '../../lazy-builtins.ts';

/**
 * Reads a file of RFC 822-style stanzas (dpkg's status, apt's Packages lists)
 * line by line, handing each stanza's single-line fields to `take`: an index of
 * tens of megabytes is never held whole. Continuation lines (a description's)
 * are skipped, since no field read here spans lines. `wanted` limits the
 * fields kept.
 */
export async function readStanzas(path: string, wanted: readonly string[], take: (fields: Record<string, string>) => void): Promise<void> {
  let fields: Record<string, string> = {};
  const flush = () => {
    if (Object.keys(fields).length) take(fields);
    fields = {};
  };
  for await (const line of readline().createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line === '') {
      flush();
      continue;
    }
    if (line.startsWith(' ') || line.startsWith('\t')) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon);
    if (wanted.includes(name)) fields[name] = line.slice(colon + 1).trim();
  }
  flush();
}
