import { createReadStream } from 'node:fs';
import { zlib } from '../../lazy-builtins.ts';
import type { BackupApi } from './backup-engine.ts';
import type { Manifest } from './backup-store.ts';
import { helperImage, withVolumeHelper } from './volume-helper.ts';

/**
 * Unpacks an archive into volumes through a stopped helper container: each
 * archived volume NAME lands in `targets.get(NAME)` (the same volume for a
 * restore, a throwaway one for a drill). Files the archive holds are written
 * over; the engine extracts as root, keeping owners and modes.
 */
export async function restoreArchive(
  docker: BackupApi,
  owner: string,
  manifest: Manifest,
  path: string,
  targets: ReadonlyMap<string, string>,
  signal: AbortSignal,
): Promise<void> {
  const image = await helperImage(docker, [...manifest.apps.map((app) => app.image_id), ...manifest.apps.map((app) => app.image)]);
  const mounts = manifest.volumes.map((volume) => ({ volume: targets.get(volume.name) ?? volume.name, name: volume.name }));
  await withVolumeHelper(docker, owner, image, mounts, false, async (helper) => {
    const file = createReadStream(path);
    const tar = file.pipe(zlib().createGunzip());
    const abort = () => {
      file.destroy();
      tar.destroy(signal.reason as Error);
    };
    signal.addEventListener('abort', abort, { once: true });
    try {
      const answer = (await helper.putArchive(tar, { path: '/' })) as unknown;
      // dockerode answers with the response stream: drain it so the request completes.
      if (answer && typeof (answer as NodeJS.ReadableStream).resume === 'function') {
        await new Promise<void>((resolve, reject) => {
          (answer as NodeJS.ReadableStream).on('end', resolve).on('error', reject).resume();
        });
      }
      signal.throwIfAborted();
    } finally {
      signal.removeEventListener('abort', abort);
    }
  });
}
