import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { EngineAccess } from '../../engine/engine-access.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { AppCatalog } from './app-catalog.ts';
import { registerInstallApp } from './install-app.ts';
import type { InstallApi, InstallEngine } from './install-engine.ts';
import { registerInstallList } from './install-list.ts';
import { registerInstallRemoval } from './install-removal.ts';
import { registerInstallStatus } from './install-status.ts';

interface InstallCollectorOptions {
  docker: InstallApi;
  /** Where the engine is, for messages. */
  address: string;
  /** A site's own app definitions (--app-catalog), besides the built-in catalog. */
  appCatalogDir: string | undefined;
}

/** homebutler's install tools: catalog apps run as containers through the engine, one volume per data path. */
export class InstallCollector implements Collector {
  readonly name = 'install';
  private readonly engine: EngineAccess<InstallApi>;
  private readonly catalog: AppCatalog;

  constructor(options: InstallCollectorOptions) {
    this.engine = new EngineAccess(options.docker, options.address, 'install');
    this.catalog = new AppCatalog(options.appCatalogDir);
  }

  probe(): Promise<CollectorStatus> {
    return this.engine.probe();
  }

  register(dispatcher: Dispatcher): void {
    const install: InstallEngine = { engine: this.engine, catalog: this.catalog };
    registerInstallList(dispatcher, install);
    registerInstallStatus(dispatcher, install);
    registerInstallApp(dispatcher, install);
    registerInstallRemoval(dispatcher, install);
  }
}
