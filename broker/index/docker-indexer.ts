import type { ContainerEvent } from '../../shared/domains/docker/container-event.ts';
import { dockerDomain } from '../../shared/domains/docker/docker-domain.ts';
import type { ContainerInventory } from '../../shared/engine/records.ts';
import type { Host } from '../agents/agent-registry.ts';
import { ContainerEvents } from './container-events.ts';
import type { IndexContext, Indexer } from './indexer.ts';

export interface InventoryEntry {
  inventory: ContainerInventory;
  hostId: string;
  receivedAt: number;
}

/** The docker domain's index: each host's last container inventory, and its container events since. */
export class DockerIndexer implements Indexer {
  readonly domain = dockerDomain;
  readonly inventories = new Map<string, InventoryEntry>();
  /** Each host's container events: restarts, failures and the newest state of its containers. */
  readonly events = new ContainerEvents();

  constructor(private readonly context: IndexContext) {}

  take(host: Host, kind: string, payload: unknown, receivedAt: number): void {
    if (kind === 'container_event') {
      if (this.events.take(host.id, payload as ContainerEvent, receivedAt)) this.context.changed('containers', host.id);
      return;
    }
    this.inventories.set(host.id, { inventory: { ...(payload as ContainerInventory), taken_unix_ms: receivedAt }, hostId: host.id, receivedAt });
    this.context.changed('containers', host.id);
  }

  forget(hostId: string): void {
    this.inventories.delete(hostId);
    this.events.forget(hostId);
  }

  prune(now: number): void {
    this.events.prune(now);
  }
}
