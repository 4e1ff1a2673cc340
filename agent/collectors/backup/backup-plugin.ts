import { backupDomain } from '../../../shared/domains/backup/backup-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { agentDockerApi } from '../docker/agent-docker-api.ts';
import { agentBackupDir } from './agent-backup-dir.ts';
import { BackupCollector } from './backup-collector.ts';

/** Volume archives through the engine, where an engine answers. */
export const backupPlugin: CollectorPlugin<BackupCollector> = {
  domain: backupDomain,
  create: ({ options, log, shared }) =>
    new BackupCollector({
      docker: agentDockerApi(options, shared),
      address: options.dockerAddress,
      backupDir: agentBackupDir(options),
      owner: options.name,
      log,
    }),
};
