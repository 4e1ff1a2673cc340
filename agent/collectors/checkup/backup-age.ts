import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What the agent's backup directory holds: absent (backups not configured), or how many archives and the newest one's time. */
export type BackupState = { configured: false } | { configured: true; archives: number; newestUnixMs: number | null };

/** Depth of the tree searched: the directory, and one folder per container or project inside it. */
const MAX_DEPTH = 2;

/**
 * Reads the agent's backup directory (`--backup-dir`, `<data dir>/backups` by
 * default): each `.tar.gz` archive counts, its manifest beside it does not.
 */
export function backupState(dir: string): BackupState {
  let archives = 0;
  let newestUnixMs: number | null = null;
  const walk = (path: string, depth: number) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory() && depth < MAX_DEPTH) walk(child, depth + 1);
      else if (entry.isFile() && !entry.name.startsWith('.') && entry.name.endsWith('.tar.gz')) {
        archives += 1;
        const modified = statSync(child).mtimeMs;
        if (newestUnixMs === null || modified > newestUnixMs) newestUnixMs = modified;
      }
    }
  };
  try {
    walk(dir, 1);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { configured: false };
    throw error;
  }
  return { configured: true, archives, newestUnixMs };
}
