import type { dockerStats } from '../../../shared/domains/docker/docker-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { containerName } from '../../engine/container-directory.ts';
import type { DockerEngine } from './docker-engine.ts';

/** docker_stats: figures of every running container, from the warm stats streams. */
export function registerDockerStats(dispatcher: Dispatcher, engine: DockerEngine): void {
  dispatcher.register<typeof dockerStats>('docker.stats', (params) =>
    engine.run(async () => {
      let running = await engine.directory.list(false);
      if (params.name) running = running.filter((c) => containerName(c).includes(params.name as string));
      const figures = await engine.stats.figures(
        running.map((c) => c.Id),
        3000,
      );
      const rows = running
        .filter((c) => figures.has(c.Id))
        .map((c) => {
          const { sampled_at_unix_ms: _at, ...values } = figures.get(c.Id) as NonNullable<ReturnType<typeof figures.get>>;
          return { id: c.Id.slice(0, 12), name: containerName(c), ...values };
        })
        .sort((a, b) => a.name.localeCompare(b.name));
      const missing = running.filter((c) => !figures.has(c.Id)).map(containerName);
      return {
        payload: { containers: rows, count: rows.length },
        errors: missing.length
          ? [
              new FleetError('collector_failed', `no stats yet for ${missing.join(', ')}`, {
                collector: 'docker',
                hint: 'Ask again in a second; the streams are warming.',
              }).toInfo(),
            ]
          : [],
      };
    }),
  );
}
