import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repo or package root: the nearest folder above this file holding fleetmesh's package.json (works from source and from dist/). */
const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate) && (JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }).name === 'fleetmesh') return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('fleetmesh: package.json not found above shared/version.ts');
    dir = parent;
  }
})();

/** The product version, from package.json, sent in Hello and shown by every command. */
export const FLEETMESH_VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The agent–broker protocol version. Bump it when a frame's meaning changes;
 * adding actions does not change it (they travel as JSON and are listed in Hello).
 */
export const PROTOCOL_VERSION = 1;

/** Messages over 16 MiB are refused on both sides of the agent stream (DESIGN §3). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
