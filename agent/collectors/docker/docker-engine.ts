import type { ContainerChanges } from './container-changes.ts';
import type { ContainerDirectory } from './container-directory.ts';
import type { DockerApi } from './docker-api.ts';
import type { EventFollower } from './event-follower.ts';
import type { StatsStreams } from './stats-streams.ts';

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
