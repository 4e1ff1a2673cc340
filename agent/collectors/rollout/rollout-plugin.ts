import { rolloutHead } from '../../../shared/domains/rollout/rollout-head.ts';
import { dockerConfigDir, RegistryCredentials } from '../../engine/registry-credentials.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { RolloutCollector } from './rollout-collector.ts';

/** Pulls and roll-forwards, where an engine answers; registry logins from this host's Docker config (--docker-config). */
export const rolloutPlugin: CollectorPlugin<RolloutCollector> = {
  domain: rolloutHead,
  create: ({ options, flags, engine }) =>
    new RolloutCollector({ docker: engine, address: options.dockerAddress, credentials: new RegistryCredentials(dockerConfigDir(flags['docker-config'])) }),
};
