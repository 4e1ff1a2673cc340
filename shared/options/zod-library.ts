import { createRequire } from 'node:module';

type Zod = typeof import('zod');

let loaded: Zod | undefined;

/**
 * The schema library, required on first use, for what only some agents read
 * (a commands file): an idle agent that imported it at start held it for
 * nothing (docs/performance.md). Its schemas are used where they are made.
 */
export function zodLibrary(): Zod {
  loaded ??= createRequire(import.meta.url)('zod') as Zod;
  return loaded;
}
