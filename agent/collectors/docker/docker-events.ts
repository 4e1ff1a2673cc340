import type { dockerEvents } from '../../../shared/domains/docker/docker-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { DockerEngine } from './docker-engine.ts';

/** docker_events: the engine's recent container events, as the collector keeps them. */
export function registerDockerEvents(dispatcher: Dispatcher, engine: DockerEngine): void {
  dispatcher.register<typeof dockerEvents>('docker.events', (params) =>
    engine.run(async () => {
      const events = engine.events.recent({
        ...(params.since_unix_ms !== undefined ? { sinceUnixMs: params.since_unix_ms } : {}),
        ...(params.types ? { types: params.types } : {}),
        ...(params.name ? { name: params.name } : {}),
        limit: params.limit ?? 100,
      });
      const rows = events.map(({ type: _type, attributes: _attributes, ...event }) => event);
      return { payload: { events: rows, count: rows.length } };
    }),
  );
}
