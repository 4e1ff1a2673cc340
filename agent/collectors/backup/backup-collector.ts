import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { EngineAccess, type EngineApi } from '../docker/engine-access.ts';
import { registerBackupCreate } from './backup-create.ts';
import { registerBackupDrill } from './backup-drill.ts';
import type { BackupEngine } from './backup-engine.ts';
import { registerBackupList } from './backup-list.ts';
import { registerBackupRestore } from './backup-restore.ts';
import { BackupStore } from './backup-store.ts';

export interface BackupCollectorOptions {
  docker: EngineApi;
  /** Where the engine is, for messages. */
  address: string;
  /** Where archives and their manifests are kept (--backup-dir). */
  backupDir: string;
}

/**
 * homebutler's backup tools: archives of named volumes on the agent's disk,
 * made and restored through the engine's archive endpoint, so they work with
 * any image (none needs tar or a shell).
 */
export class BackupCollector implements Collector {
  readonly name = 'backup';
  private readonly engine: EngineAccess;
  private readonly store: BackupStore;

  constructor(options: BackupCollectorOptions) {
    this.engine = new EngineAccess(options.docker, options.address, 'backup');
    this.store = new BackupStore(options.backupDir);
  }

  probe(): Promise<CollectorStatus> {
    return this.engine.probe();
  }

  register(dispatcher: Dispatcher): void {
    const backup: BackupEngine = { engine: this.engine, store: this.store };
    registerBackupList(dispatcher, backup);
    registerBackupCreate(dispatcher, backup);
    registerBackupDrill(dispatcher, backup);
    registerBackupRestore(dispatcher, backup);
  }
}
