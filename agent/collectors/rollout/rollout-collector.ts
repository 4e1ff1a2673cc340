import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { EngineAccess } from '../../engine/engine-access.ts';
import { ImagePuller } from '../../engine/image-puller.ts';
import type { RegistryCredentials } from '../../engine/registry-credentials.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { ChangingContainers } from './changing-containers.ts';
import { registerComposeDown } from './compose-down.ts';
import { registerComposePull } from './compose-pull.ts';
import { registerComposeUp } from './compose-up.ts';
import { registerContainerUpdate } from './container-update.ts';
import { registerImageList } from './image-list.ts';
import { registerImagePrune } from './image-prune.ts';
import { registerImagePull } from './image-pull.ts';
import type { RolloutApi, RolloutEngine } from './rollout-engine.ts';

interface RolloutCollectorOptions {
  docker: RolloutApi;
  /** Where the engine is, for messages. */
  address: string;
  /** This host's registry logins, from its Docker config. */
  credentials: RegistryCredentials;
}

/** Images and roll-forwards through the local engine, with this host's own registry logins. */
export class RolloutCollector implements Collector {
  readonly name = 'rollout';
  private readonly rollout: RolloutEngine;

  constructor(options: RolloutCollectorOptions) {
    const engine = new EngineAccess(options.docker, options.address, 'rollout');
    this.rollout = { engine, puller: new ImagePuller(options.docker, options.credentials), changing: new ChangingContainers() };
  }

  probe(): Promise<CollectorStatus> {
    return this.rollout.engine.probe();
  }

  register(dispatcher: Dispatcher): void {
    registerImageList(dispatcher, this.rollout);
    registerImagePull(dispatcher, this.rollout);
    registerImagePrune(dispatcher, this.rollout);
    registerContainerUpdate(dispatcher, this.rollout);
    registerComposePull(dispatcher, this.rollout);
    registerComposeUp(dispatcher, this.rollout);
    registerComposeDown(dispatcher, this.rollout);
  }
}
