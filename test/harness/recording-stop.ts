import { dockerStop } from '../../shared/domains/docker/docker-actions.ts';
import type { LinkedAction } from './linked-fleet.ts';

/** docker_stop on a linked fleet's agent, answering as the engine would and recording each name it stopped in `stopped`. */
export function recordingStop(stopped: string[]): LinkedAction {
  return {
    action: dockerStop,
    handler: async (params) => {
      const name = String((params as { name: string }).name);
      stopped.push(name);
      return {
        payload: {
          id: 'c1',
          name,
          state: 'exited',
          running: false,
          started_at_unix_ms: null,
          finished_at_unix_ms: 1,
          exit_code: 0,
          restart_count: 0,
          changed: true,
        },
      };
    },
  };
}
