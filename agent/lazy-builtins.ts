import { createRequire } from 'node:module';

/**
 * Built-in modules that only some calls use, required at their first use. A
 * built-in imported at the top of a collector's module is loaded by every
 * agent at start, whether or not a call ever needs it: `node:child_process`,
 * `node:zlib`, `node:dns`, `node:readline` and `node:dgram` together held
 * 1.8 MiB of an idle agent on Node 24 (docs/performance.md, the idle agent).
 */
const require = createRequire(import.meta.url);

function lazy<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}

export const childProcess = lazy<typeof import('node:child_process')>('node:child_process');
export const zlib = lazy<typeof import('node:zlib')>('node:zlib');
export const dgram = lazy<typeof import('node:dgram')>('node:dgram');
export const readline = lazy<typeof import('node:readline')>('node:readline');
export const dnsPromises = lazy<typeof import('node:dns/promises')>('node:dns/promises');
