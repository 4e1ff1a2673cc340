import { join } from 'node:path';
import type { configValidate } from '../../../shared/domains/checkup/config-validate-action.ts';
import type { doctor } from '../../../shared/domains/checkup/doctor-action.ts';
import type { inventoryExport, inventoryScan } from '../../../shared/domains/checkup/inventory-actions.ts';
import type { report } from '../../../shared/domains/checkup/report-action.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { lazyHandler } from '../../dispatcher/lazy-handler.ts';
import { LocalCalls } from '../../dispatcher/local-calls.ts';
import type { Collector, CollectorStatus } from '../collector.ts';

interface CheckupCollectorOptions {
  /** The agent's data dir: report snapshots go to `reports/`. */
  dataDir: string;
  /** Where backup_create writes its archives, for doctor's backup age. */
  backupDir: string;
  /** The agent's --config file, when it was started with one. */
  configPath?: string | undefined;
}

/**
 * A host's check-up (report, doctor, inventory, config check). It reads the
 * host through the other collectors' actions, so it is always available: a
 * collector that cannot answer makes its part skipped, not the check-up.
 */
export class CheckupCollector implements Collector {
  readonly name = 'checkup';
  private readonly calls = new LocalCalls();

  constructor(private readonly options: CheckupCollectorOptions) {}

  async probe(): Promise<CollectorStatus> {
    return { available: true, reason: '' };
  }

  register(dispatcher: Dispatcher): void {
    this.calls.attach(dispatcher);
    const { dataDir } = this.options;
    const calls = this.calls;
    // Each check-up reads every domain's parts and schemas: they load with its first call.
    dispatcher.register<typeof report>(
      'checkup.report',
      lazyHandler(async () => {
        const [{ createReportHandler }, { SnapshotStore }] = await Promise.all([import('./report-handler.ts'), import('./snapshot-store.ts')]);
        return createReportHandler(calls, new SnapshotStore(join(dataDir, 'reports')));
      }),
    );
    dispatcher.register<typeof doctor>(
      'checkup.doctor',
      lazyHandler(async () => (await import('./doctor-handler.ts')).createDoctorHandler(calls, this.options.backupDir)),
    );
    dispatcher.register<typeof inventoryScan>(
      'checkup.inventory_scan',
      lazyHandler(async () => (await import('./inventory-handler.ts')).createInventoryScanHandler(calls)),
    );
    dispatcher.register<typeof inventoryExport>(
      'checkup.inventory_export',
      lazyHandler(async () => (await import('./inventory-handler.ts')).createInventoryExportHandler(calls)),
    );
    dispatcher.register<typeof configValidate>(
      'checkup.config_validate',
      lazyHandler(async () => (await import('./config-validate-handler.ts')).createConfigValidateHandler(this.options.configPath)),
    );
  }
}
