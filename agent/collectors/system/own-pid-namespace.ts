import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What Docker and the usual container inits run as pid 1 (`docker run --init`, tini, dumb-init). */
const CONTAINER_INITS = new Set(['docker-init', 'tini', 'dumb-init']);

/**
 * Whether this process runs in a pid namespace of its own, as a container that
 * does not share the host's: it is pid 1 there itself, or a container init is.
 * The processes and ports it sees in its own /proc are then the container's,
 * not the host's. A host's pid 1 is its init system, never one of these.
 */
export function ownsPidNamespace(pid: number = process.pid, procRoot = '/proc'): boolean {
  if (pid === 1) return true;
  try {
    return CONTAINER_INITS.has(readFileSync(join(procRoot, '1', 'comm'), 'utf8').trim());
  } catch {
    return false;
  }
}
