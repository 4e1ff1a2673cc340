import type { EngineAccess } from '../docker/engine-access.ts';
import type { AppCatalog } from './app-catalog.ts';

/** What the install handlers share: the engine and the catalog. */
export interface InstallEngine {
  readonly engine: EngineAccess;
  readonly catalog: AppCatalog;
}

/** The label that marks an app's container and volumes, its value the app's name. */
export const APP_LABEL = 'fleetmesh.app';
