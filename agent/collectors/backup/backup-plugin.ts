import { backupHead } from '../../../shared/domains/backup/backup-head.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { agentBackupDir } from './agent-backup-dir.ts';
import { BackupCollector } from './backup-collector.ts';

/** Volume archives through the engine, where an engine answers. */
export const backupPlugin: CollectorPlugin<BackupCollector> = {
  domain: backupHead,
  create: ({ options, log, engine }) =>
    new BackupCollector({
      docker: engine,
      address: options.dockerAddress,
      backupDir: agentBackupDir(options),
      owner: options.name,
      log,
    }),
};
