import { containerName } from './container-directory.ts';
import type { EngineClient } from './engine-client.ts';

/**
 * What a collector may ask of the engine's containers as a whole, with nothing
 * kept between calls: how many there are and run, and which container
 * publishes each host port. Both fail as the engine's list does (unreachable,
 * refused), and the caller says what that leaves out.
 */
export class ContainerFacts {
  constructor(private readonly engine: Pick<EngineClient, 'listContainers'>) {}

  async counts(): Promise<{ running: number; total: number }> {
    const containers = await this.engine.listContainers({ all: true });
    return { running: containers.filter((c) => c.State === 'running').length, total: containers.length };
  }

  /** Container id → name, for the running containers (whose processes the host shows). */
  async namesById(): Promise<Map<string, string>> {
    return new Map((await this.engine.listContainers({ all: false })).map((container) => [container.Id, containerName(container)]));
  }

  /** `tcp:8080` → the name of the running container publishing it. */
  async publishedPorts(): Promise<Map<string, string>> {
    const map = new Map<string, string>();
    for (const container of await this.engine.listContainers({ all: false })) {
      for (const port of container.Ports) if (port.PublicPort) map.set(`${port.Type}:${port.PublicPort}`, containerName(container));
    }
    return map;
  }
}
