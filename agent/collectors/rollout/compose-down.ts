import type { composeDown } from '../../../shared/domains/rollout/compose-actions.ts';
import type { ErrorInfo } from '../../../shared/errors/fleet-error.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dockerMessage, dockerStatus } from '../../engine/engine-errors.ts';
import { PROJECT_LABEL } from './compose-labels.ts';
import type { RolloutEngine } from './rollout-engine.ts';

/** The engine's default grace before it kills a stopping container. */
const STOP_GRACE_S = 10;

/**
 * compose_down: what `docker compose down` removes, found by the project's
 * label: its containers (one-offs too), each stopped with its grace period
 * first, then its networks. Its volumes stay and are named in the answer.
 */
export function registerComposeDown(dispatcher: Dispatcher, rollout: RolloutEngine): void {
  const docker = rollout.engine.docker;
  dispatcher.register<typeof composeDown>('rollout.compose_down', (params) =>
    rollout.engine.run(async () => {
      const filters = { label: [`${PROJECT_LABEL}=${params.project}`] };
      const rows = await docker.listContainers({ all: true, filters });
      const [networks, volumes] = await Promise.all([docker.listNetworks({ filters }), docker.listVolumes({ filters })]);
      if (rows.length === 0 && networks.length === 0) {
        throw new FleetError('not_found', `no compose project "${params.project}" on this host`, {
          hint: 'docker_list label=com.docker.compose.project shows the projects this host runs.',
        });
      }
      const names = rows.map((row) => (row.Names[0] ?? row.Id).replace(/^\//, '')).sort();
      await rollout.changing.with(names, async () => {
        for (const row of rows) {
          const container = docker.getContainer(row.Id);
          if (row.State === 'running')
            await container.stop({ t: STOP_GRACE_S }).catch((error: unknown) => {
              if (dockerStatus(error) !== 304) throw error;
            });
          await container.remove({ v: false, force: true });
        }
      });
      const removed: string[] = [];
      const errors: ErrorInfo[] = [];
      for (const network of networks) {
        try {
          await docker.getNetwork(network.Id).remove();
          removed.push(network.Name);
        } catch (error) {
          errors.push(
            new FleetError('conflict', `network ${network.Name} of ${params.project} was kept: ${dockerMessage(error)}`, {
              collector: 'rollout',
              hint: 'A container outside the project still uses it; docker_inspect shows each container’s networks.',
            }).toInfo(),
          );
        }
      }
      return {
        payload: {
          project: params.project,
          containers_removed: names,
          networks_removed: removed.sort(),
          volumes_kept: (volumes.Volumes ?? []).map((volume) => volume.Name).sort(),
        },
        errors,
      };
    }),
  );
}
