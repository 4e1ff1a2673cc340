import type { composePull } from '../../../shared/domains/rollout/compose-actions.ts';
import { PULL_TIMEOUT_S } from '../../../shared/domains/rollout/rollout-head.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { SERVICE_LABEL } from './compose-labels.ts';
import { projectContainers } from './compose-project.ts';
import type { RolloutEngine } from './rollout-engine.ts';
import { shortId } from './short-id.ts';

/**
 * compose_pull: each image the project's containers name, pulled once with
 * this host's login. One image that cannot be pulled (built on the host, or
 * refused) is answered as failed beside the others, with its error.
 */
export function registerComposePull(dispatcher: Dispatcher, rollout: RolloutEngine): void {
  dispatcher.register<typeof composePull>('rollout.compose_pull', (params, context) =>
    rollout.engine.run(async () => {
      const containers = await projectContainers(rollout.engine.docker, params.project, params.services);
      const servicesOf = new Map<string, Set<string>>();
      for (const info of containers) {
        const services = servicesOf.get(info.Config.Image) ?? new Set();
        services.add(info.Config.Labels?.[SERVICE_LABEL] ?? '');
        servicesOf.set(info.Config.Image, services);
      }
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout((params.timeout_s ?? PULL_TIMEOUT_S) * 1000)]);
      const images = [];
      const errors = [];
      for (const [image, services] of servicesOf) {
        const row = { image, services: [...services].sort() };
        try {
          const pulled = await rollout.puller.pull(image, { signal, onProgress: (progress) => context.emit(progress) });
          images.push({ ...row, status: pulled.status, id: shortId(pulled.id), reason: null });
        } catch (error) {
          if (!(error instanceof FleetError)) throw error;
          images.push({ ...row, status: 'failed' as const, id: null, reason: error.message });
          errors.push({ ...error.toInfo(), collector: 'rollout' });
        }
      }
      const pulled = images.filter((image) => image.status === 'pulled').length;
      const failed = images.length - pulled - images.filter((image) => image.status === 'up_to_date').length;
      const next = pulled > 0 ? ` compose_up project=${params.project} moves its containers to them.` : '';
      return {
        payload: {
          project: params.project,
          images,
          count: images.length,
          message: `${pulled} of ${images.length} images of ${params.project} were new${failed ? `, ${failed} could not be pulled` : ''}.${next}`,
        },
        errors,
      };
    }),
  );
}
