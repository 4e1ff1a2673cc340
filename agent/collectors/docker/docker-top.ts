import type { dockerTop } from '../../../shared/domains/docker/docker-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { containerName } from '../../engine/container-directory.ts';
import type { DockerEngine } from './docker-engine.ts';

/** docker_top: the processes of a running container. */
export function registerDockerTop(dispatcher: Dispatcher, engine: DockerEngine): void {
  dispatcher.register<typeof dockerTop>('docker.top', (params) =>
    engine.run(async () => {
      const container = await engine.directory.resolve(params.name);
      if (container.State !== 'running') {
        throw new FleetError('conflict', `container "${params.name}" is ${container.State}, not running`, { hint: 'docker_start starts it.' });
      }
      const top = (await engine.docker.getContainer(container.Id).top()) as { Titles: string[]; Processes: string[][] };
      const titles = top.Titles.map((t) =>
        t
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '_')
          .replace(/^_|_$/g, ''),
      );
      return {
        payload: {
          container: containerName(container),
          titles,
          processes: top.Processes.map((row) => Object.fromEntries(titles.map((title, i) => [title, row[i] ?? '']))),
        },
      };
    }),
  );
}
