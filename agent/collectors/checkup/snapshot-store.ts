import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostSnapshot } from './host-snapshot.ts';

const PATTERN = /^snapshot-(\d+)\.json$/;

/** The report snapshots in the agent's data dir (`reports/snapshot-<unix ms>.json`), newest last. */
export class SnapshotStore {
  constructor(private readonly dir: string) {}

  private files(): { file: string; takenMs: number }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names
      .map((file) => ({ file, match: PATTERN.exec(file) }))
      .filter((entry) => entry.match)
      .map((entry) => ({ file: entry.file, takenMs: Number(entry.match?.[1]) }))
      .sort((a, b) => a.takenMs - b.takenMs);
  }

  /** The newest snapshot that can be read; a damaged file is skipped, not fatal. */
  latest(): HostSnapshot | undefined {
    for (const { file } of this.files().reverse()) {
      try {
        const snapshot = JSON.parse(readFileSync(join(this.dir, file), 'utf8')) as HostSnapshot;
        if (snapshot.schema_version === 1) return snapshot;
      } catch {
        // a half-written or foreign file: the one before it will do
      }
    }
    return undefined;
  }

  /** Saves a snapshot (written whole, then renamed) and removes all but the newest `keep`; answers how many are kept. */
  save(snapshot: HostSnapshot, keep: number): number {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, `snapshot-${snapshot.taken_at_unix_ms}.json`);
    writeFileSync(`${path}.tmp`, JSON.stringify(snapshot), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    const files = this.files();
    for (const { file } of files.slice(0, Math.max(0, files.length - keep))) rmSync(join(this.dir, file), { force: true });
    return Math.min(files.length, keep);
  }

  count(): number {
    return this.files().length;
  }
}
