/**
 * Writes the domain registries (see plugin-registries.ts) from the domain
 * folders; `npm run gen` runs it after generating the protocol code.
 * `--check` fails when a committed registry is stale instead.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderRegistries } from './plugin-registries.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
let stale = 0;
for (const [path, text] of renderRegistries(root)) {
  const file = join(root, path);
  if (!check) {
    writeFileSync(file, text);
    process.stdout.write(`wrote ${path}\n`);
    continue;
  }
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== text) {
    process.stderr.write(`${path} is stale: run npm run gen and commit it.\n`);
    stale++;
  }
}
if (stale) process.exit(1);
