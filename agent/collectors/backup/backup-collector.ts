import type { Logger } from '../../../shared/log/logger.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { EngineAccess } from '../../engine/engine-access.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { registerBackupCreate } from './backup-create.ts';
import { registerBackupDrill } from './backup-drill.ts';
import type { BackupApi, BackupEngine } from './backup-engine.ts';
import { registerBackupList } from './backup-list.ts';
import { registerBackupRestore } from './backup-restore.ts';
import { BackupStore } from './backup-store.ts';
import { OWNER_LABEL } from './volume-helper.ts';

interface BackupCollectorOptions {
  docker: BackupApi;
  /** Where the engine is, for messages. */
  address: string;
  /** Where archives and their manifests are kept (--backup-dir). */
  backupDir: string;
  /** The agent's name: what this agent's drills and helpers are labelled with. */
  owner: string;
  log: Logger;
}

/**
 * homebutler's backup tools: archives of named volumes on the agent's disk,
 * made and restored through the engine's archive endpoint, so they work with
 * any image (none needs tar or a shell).
 */
export class BackupCollector implements Collector {
  readonly name = 'backup';
  private readonly engine: EngineAccess<BackupApi>;
  private readonly store: BackupStore;

  constructor(private readonly options: BackupCollectorOptions) {
    this.engine = new EngineAccess(options.docker, options.address, 'backup');
    this.store = new BackupStore(options.backupDir);
  }

  probe(): Promise<CollectorStatus> {
    return this.engine.probe();
  }

  async start(): Promise<void> {
    if ((await this.engine.probe()).available) void this.sweep();
  }

  /**
   * Removes the helpers, drill containers and drill volumes this agent left
   * when it died mid-call (a drill cleans up after itself otherwise).
   */
  private async sweep(): Promise<void> {
    const docker = this.options.docker;
    const mine = `${OWNER_LABEL}=${this.options.owner}`;
    try {
      for (const container of await docker.listContainers({ all: true, filters: { label: [mine] } })) {
        await docker.getContainer(container.Id).remove({ force: true });
      }
      for (const volume of (await docker.listVolumes({ filters: { label: [mine, 'fleetmesh.drill'] } })).Volumes ?? []) {
        await docker.getVolume(volume.Name).remove();
      }
    } catch (error) {
      this.options.log.debug('backup sweep failed', { error: (error as Error).message });
    }
  }

  register(dispatcher: Dispatcher): void {
    const backup: BackupEngine = { engine: this.engine, store: this.store, owner: this.options.owner };
    registerBackupList(dispatcher, backup);
    registerBackupCreate(dispatcher, backup);
    registerBackupDrill(dispatcher, backup);
    registerBackupRestore(dispatcher, backup);
  }
}
