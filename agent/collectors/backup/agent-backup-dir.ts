import { join } from 'node:path';
import { DEFAULT_BACKUP_FOLDER } from '../../../shared/domains/backup/backup-head.ts';
import type { AgentOptions } from '../../agent-options.ts';

/** Where the agent keeps volume archives: --backup-dir, else `backups` in its data dir. */
export function agentBackupDir(options: AgentOptions): string {
  return options.backupDir ?? join(options.dataDir, DEFAULT_BACKUP_FOLDER);
}
