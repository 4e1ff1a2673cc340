import type { imageList } from '../../../shared/domains/rollout/image-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { RolloutEngine } from './rollout-engine.ts';
import { shortId } from './short-id.ts';

/** image_list: the engine's images (the top-level ones, as docker images shows), with how many containers each one makes. */
export function registerImageList(dispatcher: Dispatcher, rollout: RolloutEngine): void {
  const docker = rollout.engine.docker;
  dispatcher.register<typeof imageList>('rollout.image_list', (params) =>
    rollout.engine.run(async () => {
      const filters: Record<string, string[]> = {};
      if (params.reference !== undefined) filters.reference = [params.reference];
      if (params.dangling !== undefined) filters.dangling = [String(params.dangling)];
      const [images, containers] = await Promise.all([docker.listImages({ filters }), docker.listContainers({ all: true })]);
      const users = new Map<string, number>();
      for (const container of containers) users.set(container.ImageID, (users.get(container.ImageID) ?? 0) + 1);
      const rows = images
        .map((image) => {
          const tags = (image.RepoTags ?? []).filter((tag) => tag !== '<none>:<none>');
          return {
            id: shortId(image.Id),
            tags,
            size_bytes: image.Size,
            created_unix_ms: image.Created * 1000,
            containers: users.get(image.Id) ?? 0,
            dangling: tags.length === 0,
          };
        })
        .sort((a, b) => b.created_unix_ms - a.created_unix_ms || a.id.localeCompare(b.id));
      return { payload: { images: rows, count: rows.length, total_size_bytes: rows.reduce((sum, row) => sum + row.size_bytes, 0) } };
    }),
  );
}
