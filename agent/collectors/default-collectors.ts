import { join } from 'node:path';
import si from 'systeminformation';
import { DEFAULT_BACKUP_FOLDER } from '../../shared/domains/backup/backup-domain.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentOptions } from '../agent-options.ts';
import { BackupCollector } from './backup/backup-collector.ts';
import { CheckupCollector } from './checkup/checkup-collector.ts';
import type { Collector, Report } from './collector.ts';
import { createDockerApi } from './docker/docker-api.ts';
import { DockerCollector } from './docker/docker-collector.ts';
import { InstallCollector } from './install/install-collector.ts';
import { NetworkCollector } from './network/network-collector.ts';
import { ProxmoxCollector } from './proxmox/proxmox-collector.ts';
import { SandboxCollector } from './sandbox/sandbox-collector.ts';
import { SwarmCollector } from './swarm/swarm-collector.ts';
import { ownsPidNamespace } from './system/own-pid-namespace.ts';
import { SystemCollector } from './system/system-collector.ts';
import type { SystemSampler } from './system/system-sampler.ts';
import { WatchCollector } from './watch/watch-collector.ts';

interface CollectorHooks {
  /** Sends a collector's report (container events, inventories, snapshots…) to the broker. */
  report: Report;
  /** A collector became available or unavailable. */
  onAvailabilityChange(): void;
  /** A collector learned new host facts (the Proxmox VE node name). */
  onFactsChange(): void;
}

/**
 * The collectors every agent runs: system (always), docker (where an engine answers), swarm (where that
 * engine is a manager), sandbox (containers labelled as sandboxes), proxmox (when configured), watch (restarts of
 * the containers it is asked to watch), network (local subnets: scan and Wake-on-LAN), and backup and install
 * (where an engine answers).
 */
export function defaultCollectors(options: AgentOptions, sampler: SystemSampler, log: Logger, hooks: CollectorHooks): Collector[] {
  const dockerApi = createDockerApi(options.dockerAddress);
  const docker = new DockerCollector({
    docker: dockerApi,
    address: options.dockerAddress,
    log: log.child({ collector: 'docker' }),
    report: hooks.report,
    sandboxLabel: options.sandboxLabel,
    ...(options.containerSampleIntervalMs ? { metricsIntervalMs: options.containerSampleIntervalMs } : {}),
    onAvailabilityChange: hooks.onAvailabilityChange,
  });
  const swarm = new SwarmCollector({
    docker: dockerApi,
    log: log.child({ collector: 'swarm' }),
    clusterName: options.swarmName ?? '',
    report: hooks.report,
    ...(options.swarmSnapshotIntervalMs ? { snapshotIntervalMs: options.swarmSnapshotIntervalMs } : {}),
    onAvailabilityChange: hooks.onAvailabilityChange,
  });
  const sandbox = new SandboxCollector({ docker: dockerApi, log: log.child({ collector: 'sandbox' }), label: options.sandboxLabel });
  const system = new SystemCollector({
    sampler,
    si,
    thresholds: options.alertThresholds,
    dataDir: options.dataDir,
    containers: docker,
    hostProc: options.hostProc,
    containerOnly: options.hostProc === undefined && ownsPidNamespace(),
    report: hooks.report,
  });
  sampler.addContributor(() => docker.lastCounts());
  const proxmox = new ProxmoxCollector({
    config: options.proxmox,
    log: log.child({ collector: 'proxmox' }),
    onFactsChange: hooks.onFactsChange,
    report: hooks.report,
  });
  const backupDir = options.backupDir ?? join(options.dataDir, DEFAULT_BACKUP_FOLDER);
  const backup = new BackupCollector({
    docker: dockerApi,
    address: options.dockerAddress,
    backupDir,
    owner: options.name,
    log: log.child({ collector: 'backup' }),
  });
  const install = new InstallCollector({ docker: dockerApi, address: options.dockerAddress, appCatalogDir: options.appCatalogDir });
  const checkup = new CheckupCollector({ dataDir: options.dataDir, backupDir, configPath: options.configPath });
  const watch = new WatchCollector({ docker: dockerApi, dataDir: options.dataDir, log: log.child({ collector: 'watch' }), report: hooks.report });
  const network = new NetworkCollector({ reverseDns: options.scanReverseDns ?? true });
  return [system, docker, swarm, sandbox, proxmox, checkup, watch, network, backup, install];
}
