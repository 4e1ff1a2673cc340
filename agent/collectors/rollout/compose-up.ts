import type { ContainerInspectInfo } from 'dockerode';
import type { composeUp } from '../../../shared/domains/rollout/compose-actions.ts';
import { HEALTH_TIMEOUT_S } from '../../../shared/domains/rollout/rollout-head.ts';
import type { Replacement } from '../../../shared/domains/rollout/rollout-shapes.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { SERVICE_LABEL } from './compose-labels.ts';
import { inspectEach, projectContainers } from './compose-project.ts';
import { containerName } from './container-name.ts';
import { replaceContainer } from './container-replacement.ts';
import { waitUntilUp } from './container-verdict.ts';
import { overallStatus, rollForward } from './roll-forward.ts';
import type { RolloutEngine } from './rollout-engine.ts';
import { rolloutMessage } from './rollout-message.ts';

/**
 * compose_up: the project's containers as `docker compose up -d` leaves them
 * after a pull, from what runs rather than from a compose file. A container
 * whose image tag names another image now (compose_pull fetched it) is
 * recreated on it, with the same way back as container_update_image; a
 * stopped one is started. One at a time, stopping at the first that fails.
 */
export function registerComposeUp(dispatcher: Dispatcher, rollout: RolloutEngine): void {
  const docker = rollout.engine.docker;
  dispatcher.register<typeof composeUp>('rollout.compose_up', (params, context) =>
    rollout.engine.run(async () => {
      const containers = await projectContainers(docker, params.project, params.services);
      const waitS = params.timeout_s ?? HEALTH_TIMEOUT_S;
      const step = async (info: ContainerInspectInfo): Promise<Replacement> => {
        const name = containerName(info);
        const image = info.Config.Image;
        const row = { container: name, service: info.Config.Labels?.[SERVICE_LABEL] ?? null, from_image: image, to_image: image };
        const current = await rollout.puller.idOf(image);
        if (current === null) {
          return { ...row, status: 'failed', health: null, reason: `its image ${image} is not on this host: compose_pull project=${params.project} pulls it` };
        }
        if (current !== info.Image) {
          return replaceContainer(docker, info, image, { waitS, start: true, signal: context.signal, emit: (payload) => context.emit(payload) });
        }
        if (info.State.Running) return { ...row, status: 'unchanged', health: info.State.Health?.Status ?? null, reason: null };
        context.emit({ container: name, phase: 'starting' });
        const container = docker.getContainer(info.Id);
        await container.start();
        const verdict = await waitUntilUp(container, AbortSignal.any([context.signal, AbortSignal.timeout(waitS * 1000)]), waitS);
        return verdict.up
          ? { ...row, status: 'started', health: verdict.health, reason: null }
          : { ...row, status: 'failed', health: verdict.health, reason: verdict.reason };
      };
      const names = containers.map(containerName);
      const rows = await rollout.changing.with(names, async () => rollForward(await inspectEach(docker, names), (info) => info.Config.Image, step));
      const status = overallStatus(rows);
      return {
        payload: {
          project: params.project,
          status: status === 'unchanged' ? 'up_to_date' : status,
          containers: rows,
          count: rows.length,
          message: rolloutMessage(rows),
        },
      };
    }),
  );
}
