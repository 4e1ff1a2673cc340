import type { EngineAccess } from '../../engine/engine-access.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import type { AppCatalog } from './app-catalog.ts';

/** The slice of the engine client installs call: images, and the containers and volumes of the apps. */
export type InstallApi = Pick<
  EngineClient,
  'version' | 'listContainers' | 'listVolumes' | 'getImage' | 'getContainer' | 'createContainer' | 'createVolume' | 'getVolume'
>;

/** What the install handlers share: the engine and the catalog. */
export interface InstallEngine {
  readonly engine: EngineAccess<InstallApi>;
  readonly catalog: AppCatalog;
}

/** The label that marks an app's container and volumes, its value the app's name. */
export const APP_LABEL = 'fleetmesh.app';
