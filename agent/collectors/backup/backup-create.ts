import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { backupCreate } from '../../../shared/domains/backup/backup-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { zlib } from '../../lazy-builtins.ts';
import { type BackupEngine, workSignal } from './backup-engine.ts';
import { backupSource } from './backup-sources.ts';
import { type Manifest, VOLUMES_ROOT } from './backup-store.ts';
import { TarFilter } from './tar-filter.ts';
import { helperImage, withVolumeHelper } from './volume-helper.ts';

/** How often (in bytes read from the engine) a backup reports progress. */
const PROGRESS_EVERY_BYTES = 16 * 1024 * 1024;

/** `web-20261130T195612345Z`: sorts by time, and is safe as a file name. */
function archiveName(source: string, createdUnixMs: number): string {
  const stamp = new Date(createdUnixMs).toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${source.replace(/[^A-Za-z0-9_.-]/g, '_')}-${stamp}`;
}

/**
 * backup_create: the engine streams the volumes out of a stopped helper
 * container (the app keeps running: the archive is what a crash would leave),
 * the stream is filtered by exclude, gzipped and hashed on its way to disk;
 * the manifest is written last.
 */
export function registerBackupCreate(dispatcher: Dispatcher, backup: BackupEngine): void {
  const docker = backup.engine.docker;
  dispatcher.register<typeof backupCreate>('backup.create', (params, context) =>
    backup.engine.run(async () => {
      const startedUnixMs = Date.now();
      const source = await backupSource(docker, params);
      const dir = await backup.store.target(params.to);
      const archive = archiveName(source.source, startedUnixMs);
      const file = `${archive}.tar.gz`;
      const path = join(dir, file);
      const partial = `${path}.partial`;
      const image = await helperImage(
        docker,
        source.apps.map((app) => app.image_id),
      );
      const filter = new TarFilter(params.exclude ?? [], 2);
      const hash = createHash('sha256');
      let sizeBytes = 0;
      let readBytes = 0;
      let reportedBytes = 0;
      context.emit({ phase: 'archiving', volumes: source.volumes.length });
      try {
        await withVolumeHelper(
          docker,
          backup.owner,
          image,
          source.volumes.map((volume) => ({ volume: volume.name, name: volume.name })),
          true,
          async (helper) => {
            const tar = (await helper.getArchive({ path: `/${VOLUMES_ROOT}` })) as NodeJS.ReadableStream;
            const counter = new Transform({
              transform(chunk: Buffer, _encoding, done) {
                readBytes += chunk.length;
                if (readBytes - reportedBytes >= PROGRESS_EVERY_BYTES) {
                  reportedBytes = readBytes;
                  context.emit({ phase: 'archiving', read_bytes: readBytes });
                }
                done(null, chunk);
              },
            });
            const tap = new Transform({
              transform(chunk: Buffer, _encoding, done) {
                hash.update(chunk);
                sizeBytes += chunk.length;
                done(null, chunk);
              },
            });
            await pipeline(tar, counter, filter, zlib().createGzip(), tap, createWriteStream(partial, { mode: 0o600 }), {
              signal: workSignal(context, params.timeout_s, 600),
            });
          },
        );
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      const manifest: Manifest = {
        format: 1,
        archive,
        file,
        source: source.source,
        source_kind: source.kind,
        volumes: source.volumes,
        apps: source.apps,
        size_bytes: sizeBytes,
        sha256: hash.digest('hex'),
        created_unix_ms: startedUnixMs,
      };
      await backup.store.save(dir, manifest);
      return {
        payload: {
          archive,
          path,
          source: manifest.source,
          source_kind: manifest.source_kind,
          volumes: manifest.volumes,
          size_bytes: manifest.size_bytes,
          sha256: manifest.sha256,
          created_unix_ms: startedUnixMs,
          skipped_mounts: source.skipped,
          entries: filter.entries,
          excluded: filter.excluded,
          duration_ms: Date.now() - startedUnixMs,
        },
      };
    }),
  );
}
