import type { imagePrune } from '../../../shared/domains/rollout/image-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { RolloutEngine } from './rollout-engine.ts';
import { shortId } from './short-id.ts';

/**
 * image_prune: the engine's own prune, which never deletes an image a
 * container uses (running or not); untagged images only unless `all`.
 */
export function registerImagePrune(dispatcher: Dispatcher, rollout: RolloutEngine): void {
  const docker = rollout.engine.docker;
  dispatcher.register<typeof imagePrune>('rollout.image_prune', (params) =>
    rollout.engine.run(async () => {
      const filters: Record<string, string[]> = { dangling: [params.all ? 'false' : 'true'] };
      if (params.label !== undefined) filters.label = [params.label];
      // The engine lists every layer it deleted beside the images: count the images the host had.
      const images = new Set((await docker.listImages({ all: true })).map((image) => image.Id));
      const pruned = await docker.pruneImages({ filters });
      const removed = pruned.ImagesDeleted ?? [];
      const deleted = removed.flatMap((entry) => (entry.Deleted && images.has(entry.Deleted) ? [shortId(entry.Deleted)] : []));
      const untagged = removed.flatMap((entry) => (entry.Untagged && !entry.Untagged.startsWith('sha256:') ? [entry.Untagged] : []));
      return { payload: { deleted, untagged, count: deleted.length, space_reclaimed_bytes: pruned.SpaceReclaimed ?? 0 } };
    }),
  );
}
