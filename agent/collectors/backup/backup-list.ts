import type { backupList } from '../../../shared/domains/backup/backup-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { BackupEngine } from './backup-engine.ts';
import { BackupStore } from './backup-store.ts';

/** backup_list: the manifests on disk; it needs no engine, so it answers while Docker is away. */
export function registerBackupList(dispatcher: Dispatcher, backup: BackupEngine): void {
  dispatcher.register<typeof backupList>('backup.list', async (params) => {
    const rows = (await backup.store.list())
      .map(BackupStore.row)
      .filter((row) => params.container === undefined || (row.source_kind === 'container' && row.source === params.container))
      .filter((row) => params.project === undefined || (row.source_kind === 'project' && row.source === params.project));
    return { payload: { backup_dir: backup.store.dir, backups: rows, count: rows.length } };
  });
}
