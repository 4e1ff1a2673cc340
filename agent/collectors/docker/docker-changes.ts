import { setTimeout as delay } from 'node:timers/promises';
import type { ContainerInspectInfo } from 'dockerode';
import type { dockerRestart, dockerStart, dockerStop } from '../../../shared/domains/docker/docker-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { CallContext, Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dockerMessage, dockerStatus } from '../../engine/engine-errors.ts';
import { unixMs } from '../../engine/engine-time.ts';
import type { DockerEngine } from './docker-engine.ts';

/** How long a change waits for the engine's event stream to catch up with the engine's answer. */
const EVENT_LAG_MS = 2_000;

function stateOf(info: ContainerInspectInfo, changed: boolean) {
  return {
    id: info.Id.slice(0, 12),
    name: info.Name.replace(/^\//, ''),
    state: info.State.Status,
    running: info.State.Running,
    started_at_unix_ms: unixMs(info.State.StartedAt),
    finished_at_unix_ms: unixMs(info.State.FinishedAt),
    exit_code: info.State.ExitCode,
    restart_count: info.RestartCount,
    changed,
  };
}

/** One change, and the container's state after it. */
async function apply(engine: DockerEngine, verb: 'start' | 'restart' | 'stop', containerId: string, params: { name: string; timeout_s?: number }) {
  const handle = engine.docker.getContainer(containerId);
  let changed = true;
  try {
    if (verb === 'start') await handle.start();
    else if (verb === 'restart') await handle.restart({ t: params.timeout_s ?? 10 });
    else await handle.stop({ t: params.timeout_s ?? 10 });
  } catch (error) {
    // 304: already in the requested state.
    if (dockerStatus(error) === 304) changed = false;
    else throw new FleetError('collector_failed', `the engine could not ${verb} "${params.name}": ${dockerMessage(error)}`, { collector: 'docker' });
  }
  const info = await engine.directory.refresh(containerId);
  if (!info) throw new FleetError('not_found', `container "${params.name}" is gone`);
  return { payload: stateOf(info, changed) };
}

/** docker_start, docker_restart and docker_stop: one change at a time per container, streaming the engine's events for it while it runs. */
export function registerDockerChanges(dispatcher: Dispatcher, engine: DockerEngine): void {
  const change = (verb: 'start' | 'restart' | 'stop') => async (params: { name: string; timeout_s?: number }, context: CallContext) =>
    engine.run(async () => {
      const container = await engine.directory.resolve(params.name);
      return engine.changes.run(container.Id, async () => {
        // What the engine does to the container meanwhile (kill, die, stop, start) goes up as it happens: the caller's progress.
        const id = container.Id.slice(0, 12);
        let closed: () => void = () => {};
        const closing = new Promise<void>((resolve) => {
          closed = resolve;
        });
        const unwatch = engine.events.watch((event) => {
          if (event.type !== 'container' || event.id !== id) return;
          context.emit({ event: event.action, ...(event.exit_code !== undefined ? { exit_code: event.exit_code } : {}) });
          if (event.action === verb) closed();
        });
        try {
          const result = await apply(engine, verb, container.Id, params);
          // The engine's event stream lags its answer: wait, briefly, for the event that closes the change, so the caller hears it before the result.
          if (result.payload.changed) {
            const lag = new AbortController();
            await Promise.race([closing, delay(EVENT_LAG_MS, undefined, { signal: lag.signal }).catch(() => {})]);
            lag.abort();
          }
          return result;
        } finally {
          unwatch();
        }
      });
    });
  dispatcher.register<typeof dockerStart>('docker.start', change('start'));
  dispatcher.register<typeof dockerRestart>('docker.restart', change('restart'));
  dispatcher.register<typeof dockerStop>('docker.stop', change('stop'));
}
