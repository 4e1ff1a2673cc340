import type { ContainerInspectInfo } from 'dockerode';
import { HEALTH_TIMEOUT_S, PULL_TIMEOUT_S } from '../../../shared/domains/rollout/rollout-head.ts';
import type { containerUpdateImage } from '../../../shared/domains/rollout/update-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { CallContext, Dispatcher } from '../../dispatcher/dispatcher.ts';
import { ContainerDirectory } from '../../engine/container-directory.ts';
import { parseImageReference, withTag } from '../../engine/image-reference.ts';
import { inspectEach, projectContainers } from './compose-project.ts';
import { containerName } from './container-name.ts';
import { replaceContainer } from './container-replacement.ts';
import { overallStatus, rollForward } from './roll-forward.ts';
import type { RolloutEngine } from './rollout-engine.ts';
import { rolloutMessage } from './rollout-message.ts';

/** The image a container moves to: the reference given, or its own repository with the tag given as `:TAG`. */
function targetImage(info: ContainerInspectInfo, wanted: string): string {
  if (!wanted.startsWith(':')) return parseImageReference(wanted).text;
  if (/^sha256:/.test(info.Config.Image)) {
    throw new FleetError('invalid_argument', `${containerName(info)} was made from an image id, which has no repository to give a tag`, {
      hint: 'Name the new image in full: image=REPO:TAG.',
    });
  }
  return withTag(parseImageReference(info.Config.Image), wanted.slice(1)).text;
}

/** Pulls each image the host lacks, with its login; the progress of each goes out as chunks. */
export async function pullMissing(rollout: RolloutEngine, images: readonly string[], context: CallContext): Promise<void> {
  for (const image of new Set(images)) {
    if ((await rollout.puller.idOf(image)) !== null) continue;
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(PULL_TIMEOUT_S * 1000)]);
    await rollout.puller.pull(image, { signal, onProgress: (progress) => context.emit(progress) });
  }
}

/**
 * container_update_image: one container by name, or every container of a
 * compose service, recreated on the new image one at a time; a container
 * that does not come up is restored and the others are left alone.
 */
export function registerContainerUpdate(dispatcher: Dispatcher, rollout: RolloutEngine): void {
  const docker = rollout.engine.docker;
  const directory = new ContainerDirectory(docker);
  dispatcher.register<typeof containerUpdateImage>('rollout.container_update_image', (params, context) =>
    rollout.engine.run(async () => {
      const byName = params.name !== undefined;
      if (byName === (params.project !== undefined || params.service !== undefined) || (!byName && (!params.project || !params.service))) {
        throw new FleetError('invalid_argument', 'name either a container (name) or a compose service (project and service)', {
          hint: 'container_update_image name=web image=:2, or project=shop service=web image=:2.',
        });
      }
      const found = byName
        ? [await docker.getContainer((await directory.resolve(params.name as string)).Id).inspect()]
        : await projectContainers(docker, params.project as string, [params.service as string]);
      const names = found.map(containerName);
      const targets = new Map(found.map((info) => [containerName(info), targetImage(info, params.image)]));
      const targetOf = (info: ContainerInspectInfo) => targets.get(containerName(info)) as string;
      await pullMissing(rollout, [...targets.values()], context);
      const waitS = params.timeout_s ?? HEALTH_TIMEOUT_S;
      const rows = await rollout.changing.with(names, async () =>
        rollForward(await inspectEach(docker, names), targetOf, (info) =>
          replaceContainer(docker, info, targetOf(info), { waitS, start: false, signal: context.signal, emit: (payload) => context.emit(payload) }),
        ),
      );
      return {
        payload: {
          status: overallStatus(rows),
          image: targets.get(names[0] as string) as string,
          containers: rows,
          count: rows.length,
          message: rolloutMessage(rows),
        },
      };
    }),
  );
}
