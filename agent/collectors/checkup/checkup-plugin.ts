import { checkupHead } from '../../../shared/domains/checkup/checkup-head.ts';
import { agentBackupDir } from '../backup/agent-backup-dir.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { CheckupCollector } from './checkup-collector.ts';

/** Reports, doctor, inventory and config checks of the host. */
export const checkupPlugin: CollectorPlugin<CheckupCollector> = {
  domain: checkupHead,
  create: ({ options }) => new CheckupCollector({ dataDir: options.dataDir, backupDir: agentBackupDir(options), configPath: options.configPath }),
};
