import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { EngineAccess } from '../../engine/engine-access.ts';
import { ImagePuller } from '../../engine/image-puller.ts';
import type { RegistryCredentials } from '../../engine/registry-credentials.ts';
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
  /** This host's registry logins, for the pull of an app's missing image. */
  credentials: RegistryCredentials;
}

/** homebutler's install tools: catalog apps run as containers through the engine, one volume per data path. */
export class InstallCollector implements Collector {
  readonly name = 'install';
  private readonly engine: EngineAccess<InstallApi>;
  private readonly puller: ImagePuller;
  private readonly catalog: AppCatalog;

  constructor(options: InstallCollectorOptions) {
    this.engine = new EngineAccess(options.docker, options.address, 'install');
    this.puller = new ImagePuller(options.docker, options.credentials);
    this.catalog = new AppCatalog(options.appCatalogDir);
  }

  probe(): Promise<CollectorStatus> {
    return this.engine.probe();
  }

  register(dispatcher: Dispatcher): void {
    const install: InstallEngine = { engine: this.engine, puller: this.puller, catalog: this.catalog };
    registerInstallList(dispatcher, install);
    registerInstallStatus(dispatcher, install);
    registerInstallApp(dispatcher, install);
    registerInstallRemoval(dispatcher, install);
  }
}
