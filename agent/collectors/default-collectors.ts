import si from 'systeminformation';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentOptions } from '../agent-options.ts';
import type { Collector } from './collector.ts';
import { createDockerApi } from './docker/docker-api.ts';
import { DockerCollector } from './docker/docker-collector.ts';
import type { ContainerEvent } from './docker/event-follower.ts';
import { ProxmoxCollector } from './proxmox/proxmox-collector.ts';
import { SystemCollector } from './system/system-collector.ts';
import type { SystemSampler } from './system/system-sampler.ts';

export interface CollectorHooks {
  /** A container event the broker should hear about. */
  onContainerEvent(event: ContainerEvent): void;
  /** A collector became available or unavailable. */
  onAvailabilityChange(): void;
  /** A collector learned new host facts (the Proxmox VE node name). */
  onFactsChange(): void;
}

/**
 * The collectors every agent runs: system (always), docker (available when the
 * engine answers) and proxmox (available when configured).
 */
export function defaultCollectors(options: AgentOptions, sampler: SystemSampler, log: Logger, hooks: CollectorHooks): Collector[] {
  const docker = new DockerCollector({
    docker: createDockerApi(options.dockerAddress),
    address: options.dockerAddress,
    log: log.child({ collector: 'docker' }),
    onEvent: hooks.onContainerEvent,
    onAvailabilityChange: hooks.onAvailabilityChange,
  });
  const system = new SystemCollector({ sampler, si, thresholds: options.alertThresholds, dataDir: options.dataDir, containers: docker });
  sampler.addContributor(() => docker.lastCounts());
  const proxmox = new ProxmoxCollector({ config: options.proxmox, log: log.child({ collector: 'proxmox' }), onFactsChange: hooks.onFactsChange });
  return [system, docker, proxmox];
}
