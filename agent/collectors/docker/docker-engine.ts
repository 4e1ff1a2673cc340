import type { ContainerDirectory } from '../../engine/container-directory.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import type { EventFollower } from '../../engine/event-follower.ts';
import type { ContainerChanges } from './container-changes.ts';
import type { StatsStreams } from './stats-streams.ts';

/** The slice of the engine client the docker collector and its handlers call. */
export type DockerApi = Pick<EngineClient, 'version' | 'listContainers' | 'listVolumes' | 'listNetworks' | 'getContainer' | 'getEvents'>;

/** What the docker collector's handlers share: the engine, what the collector keeps of it, and the way to call it. */
export interface DockerEngine {
  readonly docker: DockerApi;
  readonly directory: ContainerDirectory;
  /** Changes under way per container: one at a time, and state reads wait for them. */
  readonly changes: ContainerChanges;
  readonly stats: StatsStreams;
  readonly events: EventFollower;
  /** Runs an engine request, turning an unreachable engine into collector_unavailable (and noticing it). */
  run<T>(work: () => Promise<T>): Promise<T>;
}
