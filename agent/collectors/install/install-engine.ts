import type { EngineAccess } from '../../engine/engine-access.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import type { ImagePuller } from '../../engine/image-puller.ts';
import type { AppCatalog } from './app-catalog.ts';

/** The slice of the engine client installs call: images (pulled when missing), and the containers and volumes of the apps. */
export type InstallApi = Pick<
  EngineClient,
  'version' | 'listContainers' | 'listVolumes' | 'getImage' | 'pull' | 'getContainer' | 'createContainer' | 'createVolume' | 'getVolume'
>;

/** What the install handlers share: the engine, the puller with the host's registry logins, and the catalog. */
export interface InstallEngine {
  readonly engine: EngineAccess<InstallApi>;
  readonly puller: ImagePuller;
  readonly catalog: AppCatalog;
}

/** The label that marks an app's container and volumes, its value the app's name. */
export const APP_LABEL = 'fleetmesh.app';
