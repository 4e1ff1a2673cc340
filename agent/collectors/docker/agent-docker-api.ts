import type Docker from 'dockerode';
import type { AgentOptions } from '../../agent-options.ts';
import type { CollectorContext } from '../collector-plugin.ts';
import { createDockerApi } from './docker-api.ts';

/** The one engine client an agent's collectors share (docker, swarm, sandbox, watch, backup, install). */
export function agentDockerApi(options: AgentOptions, shared: CollectorContext['shared']): Docker {
  return shared('docker-api', () => createDockerApi(options.dockerAddress));
}
