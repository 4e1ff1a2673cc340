import type { ContainerEvent } from '../../../shared/domains/docker/container-event.ts';

/** One engine event as the index keeps it: stamped with the broker's receipt time, never the agent's clock. */
interface IndexedContainerEvent {
  action: string;
  exit_code: number | null;
  receivedAt: number;
}

/** A container's failure, in the shape describe lists failures. */
interface ContainerFailure {
  task: string;
  task_id: string;
  node: string;
  state: string;
  error: string;
  exit_code: number | null;
  timestamp_unix_ms: number;
}

const KEEP_MS = 7 * 86_400_000;
/** Bounds on what one agent's reports may make the broker hold. */
const PER_CONTAINER = 200;
const CONTAINERS_PER_HOST = 5000;

/** The state an event leaves a container in; undefined when the event says nothing about it. */
const STATE_AFTER: Record<string, string> = { die: 'exited', start: 'running', restart: 'running', pause: 'paused', unpause: 'running' };

/**
 * The docker domain's container event reports, per host and container: what
 * describe shows as a container's restarts and recent failures, and its state
 * when an event is newer than the host's last inventory.
 */
export class ContainerEvents {
  private readonly byHost = new Map<string, Map<string, { name: string; events: IndexedContainerEvent[]; seen: Set<string> }>>();

  take(hostId: string, event: ContainerEvent, receivedAt: number): boolean {
    if (event.type !== 'container' || !event.id) return false;
    const containers = this.byHost.get(hostId) ?? new Map();
    this.byHost.set(hostId, containers);
    const id = event.id.slice(0, 12);
    let entry = containers.get(id);
    if (!entry) {
      if (containers.size >= CONTAINERS_PER_HOST) containers.delete(containers.keys().next().value as string);
      entry = { name: event.name, events: [], seen: new Set() };
      containers.set(id, entry);
    }
    // The agent replays the engine's recent events after it restarts: the same event counts once.
    const key = `${event.time_unix_ms}/${event.action}`;
    if (entry.seen.has(key)) return false;
    entry.seen.add(key);
    if (event.name) entry.name = event.name;
    entry.events.push({ action: event.action, exit_code: event.exit_code ?? null, receivedAt });
    if (entry.events.length > PER_CONTAINER) {
      entry.events.splice(0, entry.events.length - PER_CONTAINER);
      if (entry.seen.size > 2 * PER_CONTAINER) entry.seen.clear();
    }
    if (event.action === 'destroy') containers.delete(id);
    return true;
  }

  forget(hostId: string): void {
    this.byHost.delete(hostId);
  }

  /** The container's state after its newest event, when that event came after `sinceMs`. */
  stateSince(hostId: string, containerId: string, sinceMs: number): string | undefined {
    const events = this.events(hostId, containerId).filter((e) => e.receivedAt > sinceMs && STATE_AFTER[e.action] !== undefined);
    const last = events.at(-1);
    return last ? STATE_AFTER[last.action] : undefined;
  }

  /** Exits with a non-zero code and out-of-memory kills, newest first, at most 5. */
  recentFailures(hostId: string, hostName: string, containerId: string): ContainerFailure[] {
    const entry = this.byHost.get(hostId)?.get(containerId.slice(0, 12));
    if (!entry) return [];
    return entry.events
      .filter((e) => e.action === 'oom' || (e.action === 'die' && e.exit_code !== null && e.exit_code !== 0))
      .reverse()
      .slice(0, 5)
      .map((e) => ({
        task: entry.name,
        task_id: containerId.slice(0, 12),
        node: hostName,
        state: e.action === 'oom' ? 'oom_killed' : 'exited',
        error: e.action === 'oom' ? 'killed for lack of memory' : `exited with code ${e.exit_code}`,
        exit_code: e.exit_code,
        timestamp_unix_ms: e.receivedAt,
      }));
  }

  /** Starts that followed an exit: the engine's restart policy or an operator bringing the container back. */
  restarts(hostId: string, containerId: string, now: number): { last_hour: number; last_week: number } {
    let died = false;
    const restarts: number[] = [];
    for (const event of this.events(hostId, containerId)) {
      if (event.action === 'die') died = true;
      else if (event.action === 'start' && died) {
        restarts.push(event.receivedAt);
        died = false;
      }
    }
    return { last_hour: restarts.filter((at) => at >= now - 3_600_000).length, last_week: restarts.filter((at) => at >= now - KEEP_MS).length };
  }

  /** Drops what is older than a week. */
  prune(now: number): void {
    for (const containers of this.byHost.values()) {
      for (const [id, entry] of containers) {
        entry.events = entry.events.filter((e) => e.receivedAt >= now - KEEP_MS);
        if (entry.events.length === 0) containers.delete(id);
      }
    }
  }

  private events(hostId: string, containerId: string): IndexedContainerEvent[] {
    return this.byHost.get(hostId)?.get(containerId.slice(0, 12))?.events ?? [];
  }
}
