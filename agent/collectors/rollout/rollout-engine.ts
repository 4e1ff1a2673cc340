import type { EngineAccess } from '../../engine/engine-access.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import type { ImagePuller } from '../../engine/image-puller.ts';
import type { ChangingContainers } from './changing-containers.ts';

/** The slice of the engine client roll-forwards call: images, containers, and the networks and volumes of compose projects. */
export type RolloutApi = Pick<
  EngineClient,
  | 'version'
  | 'listContainers'
  | 'listImages'
  | 'listNetworks'
  | 'listVolumes'
  | 'getContainer'
  | 'getImage'
  | 'getNetwork'
  | 'createContainer'
  | 'pull'
  | 'pruneImages'
>;

/** What the rollout handlers share: the engine, the puller with the host's logins, and the containers being replaced now. */
export interface RolloutEngine {
  readonly engine: EngineAccess<RolloutApi>;
  readonly puller: ImagePuller;
  readonly changing: ChangingContainers;
}
