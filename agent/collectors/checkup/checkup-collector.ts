import { join } from 'node:path';
import { configValidate } from '../../../shared/domains/checkup/config-validate-action.ts';
import { doctor } from '../../../shared/domains/checkup/doctor-action.ts';
import { inventoryExport, inventoryScan } from '../../../shared/domains/checkup/inventory-actions.ts';
import { report } from '../../../shared/domains/checkup/report-action.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { LocalCalls } from '../../dispatcher/local-calls.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { createConfigValidateHandler } from './config-validate-handler.ts';
import { createDoctorHandler } from './doctor-handler.ts';
import { createInventoryExportHandler, createInventoryScanHandler } from './inventory-handler.ts';
import { createReportHandler } from './report-handler.ts';
import { SnapshotStore } from './snapshot-store.ts';

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
    dispatcher.register(report, createReportHandler(this.calls, new SnapshotStore(join(dataDir, 'reports'))));
    dispatcher.register(doctor, createDoctorHandler(this.calls, this.options.backupDir));
    dispatcher.register(inventoryScan, createInventoryScanHandler(this.calls));
    dispatcher.register(inventoryExport, createInventoryExportHandler(this.calls));
    dispatcher.register(configValidate, createConfigValidateHandler(this.options.configPath));
  }
}
