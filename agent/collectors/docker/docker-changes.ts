import type { ContainerInspectInfo } from 'dockerode';
import { dockerRestart, dockerStart, dockerStop } from '../../../shared/domains/docker/docker-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dockerMessage, dockerStatus } from '../../engine/engine-errors.ts';
import { unixMs } from '../../engine/engine-time.ts';
import type { DockerEngine } from './docker-engine.ts';

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

/** docker_start, docker_restart and docker_stop: one change at a time per container. */
export function registerDockerChanges(dispatcher: Dispatcher, engine: DockerEngine): void {
  const change = (verb: 'start' | 'restart' | 'stop') => async (params: { name: string; timeout_s?: number }) =>
    engine.run(async () => {
      const container = await engine.directory.resolve(params.name);
      const handle = engine.docker.getContainer(container.Id);
      return engine.changes.run(container.Id, async () => {
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
        const info = await engine.directory.refresh(container.Id);
        if (!info) throw new FleetError('not_found', `container "${params.name}" is gone`);
        return { payload: stateOf(info, changed) };
      });
    });
  dispatcher.register(dockerStart, change('start'));
  dispatcher.register(dockerRestart, change('restart'));
  dispatcher.register(dockerStop, change('stop'));
}
