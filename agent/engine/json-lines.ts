import type { Readable } from 'node:stream';

/**
 * Calls `onValue` with each JSON value of a stream the engine writes one per
 * line (events, stats), however its chunks cut the lines; blank and
 * unparseable lines are skipped.
 */
export function onJsonLines(stream: Readable, onValue: (value: unknown) => void): void {
  let buffer = '';
  stream.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      if (!line) continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue;
      }
      onValue(value);
    }
  });
}
