import { dockerHead } from '../../../shared/domains/docker/docker-head.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { DockerCollector } from './docker-collector.ts';

/** The engine's containers, volumes, logs and events, where an engine answers. */
export const dockerPlugin: CollectorPlugin<DockerCollector> = {
  domain: dockerHead,
  create: ({ options, flags, log, hooks, sampler, engine }) => {
    const docker = new DockerCollector({
      docker: engine,
      address: options.dockerAddress,
      log,
      report: hooks.report,
      sandboxLabel: flags['sandbox-label'],
      ...(options.containerSampleIntervalMs ? { metricsIntervalMs: options.containerSampleIntervalMs } : {}),
      onAvailabilityChange: hooks.onAvailabilityChange,
    });
    sampler.addContributor(() => docker.lastCounts());
    return docker;
  },
};
