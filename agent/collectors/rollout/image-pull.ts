import type { imagePull } from '../../../shared/domains/rollout/image-actions.ts';
import { PULL_TIMEOUT_S } from '../../../shared/domains/rollout/rollout-head.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { RolloutEngine } from './rollout-engine.ts';
import { shortId } from './short-id.ts';

/** image_pull: one image through the engine, with this host's registry login; progress as layers arrive. */
export function registerImagePull(dispatcher: Dispatcher, rollout: RolloutEngine): void {
  dispatcher.register<typeof imagePull>('rollout.image_pull', (params, context) =>
    rollout.engine.run(async () => {
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout((params.timeout_s ?? PULL_TIMEOUT_S) * 1000)]);
      const pulled = await rollout.puller.pull(params.image, { signal, onProgress: (progress) => context.emit(progress) });
      return {
        payload: {
          image: pulled.image,
          registry: pulled.registry,
          status: pulled.status,
          id: shortId(pulled.id),
          previous_id: pulled.previous_id === null ? null : shortId(pulled.previous_id),
          digest: pulled.digest,
          size_bytes: pulled.size_bytes,
          credentials: pulled.credentials,
        },
      };
    }),
  );
}
