import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { z } from 'zod';
import type { backupRowShape } from '../../../shared/domains/backup/backup-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { AppRecord, Manifest } from './backup-manifest.ts';

export type { AppRecord, Manifest };

type BackupRow = z.infer<typeof backupRowShape>;

/** The folder inside helper containers where each volume is mounted by its name, and the archive's top folder. */
export const VOLUMES_ROOT = 'fleetmesh-volumes';

/** Archives, each a `.tar.gz` with its `.json` manifest, in the backup directory or folders under it. */
export class BackupStore {
  constructor(readonly dir: string) {}

  /** The directory a new archive goes to: the backup directory, or `to` inside it. */
  async target(to: string | undefined): Promise<string> {
    const dir = to === undefined ? this.dir : resolve(this.dir, to);
    const inside = relative(this.dir, dir);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      throw new FleetError('invalid_argument', `to: ${to} is outside the backup directory ${this.dir}`, {
        hint: 'Name a folder inside it, or start the agent with --backup-dir pointing where archives should go.',
      });
    }
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  async list(): Promise<{ manifest: Manifest; path: string }[]> {
    const found: { manifest: Manifest; path: string }[] = [];
    // The manifest's shape loads with the first listing, not with the agent.
    const { manifestSchema } = await import('./backup-manifest.ts');
    const walk = async (dir: string, depth: number): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory() && depth < 4) await walk(path, depth + 1);
        else if (entry.isFile() && entry.name.endsWith('.json')) {
          try {
            const manifest = manifestSchema.parse(JSON.parse(await readFile(path, 'utf8')));
            found.push({ manifest, path: join(dir, manifest.file) });
          } catch {
            // Not a manifest of ours.
          }
        }
      }
    };
    await walk(this.dir, 0);
    return found.sort((a, b) => b.manifest.created_unix_ms - a.manifest.created_unix_ms);
  }

  async find(archive: string): Promise<{ manifest: Manifest; path: string }> {
    const hit = (await this.list()).find((entry) => entry.manifest.archive === archive);
    if (!hit) throw new FleetError('not_found', `no archive "${archive}" in ${this.dir}`, { hint: 'backup_list shows the archives of this host.' });
    return hit;
  }

  /** Writes the manifest last, so an archive without one (an interrupted backup) is never listed. */
  async save(dir: string, manifest: Manifest): Promise<void> {
    const path = join(dir, `${manifest.archive}.json`);
    await writeFile(`${path}.partial`, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    await rename(`${path}.partial`, path);
  }

  static row(entry: { manifest: Manifest; path: string }): BackupRow {
    const { manifest } = entry;
    return {
      archive: manifest.archive,
      path: entry.path,
      source: manifest.source,
      source_kind: manifest.source_kind,
      volumes: manifest.volumes,
      size_bytes: manifest.size_bytes,
      sha256: manifest.sha256,
      created_unix_ms: manifest.created_unix_ms,
    };
  }
}

/** Whether an archive file still has the checksum its manifest recorded. */
export async function checksumMatches(path: string, sha256: string): Promise<boolean> {
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(path), hash);
  } catch {
    return false;
  }
  return hash.digest('hex') === sha256;
}
