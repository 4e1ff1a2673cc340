import type { ContainerEvent } from '../../../shared/domains/docker/container-event.ts';
import type { ContainerInventory, ContainerRecord, NetworkRecord, VolumeRecord } from '../../../shared/engine/records.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import { type Digest, type Related, type Resource, type RowFilter, wantsType } from '../../index/resource.ts';
import { ContainerEvents } from './container-events.ts';

export interface InventoryEntry {
  inventory: ContainerInventory;
  hostId: string;
  receivedAt: number;
  /** What of the inventory the resource lists and grants read: all of it but the figures that change while the things stay. */
  listing: string;
}

/**
 * An inventory as lists see it. An agent sends its inventory every 30 s,
 * mostly the same things in new states: a fleet of 10,000 hosts sends 333 a
 * second, and each one that made every MCP session list every resource again
 * kept the sessions' list checks running without end.
 */
function listingOf(inventory: ContainerInventory): string {
  const containers = inventory.containers.map(({ state: _state, status: _status, restart_count: _restarts, ...listed }) => listed);
  return JSON.stringify([containers, inventory.volumes, inventory.networks ?? []]);
}

function containerRow(container: ContainerRecord, host: Host): Resource {
  return {
    row: {
      id: container.id.slice(0, 12),
      name: container.name,
      type: 'container',
      ...(container.stack ? { stack: container.stack } : {}),
      state: container.state,
      detail: container.image,
      host: host.name,
    },
    record: container,
    labels: container.labels,
    image: container.image,
    node: host.name,
    host,
  };
}

function volumeRow(volume: VolumeRecord, host: Host): Resource {
  return {
    row: {
      id: volume.name,
      name: volume.name,
      type: 'volume',
      ...(volume.stack ? { stack: volume.stack } : {}),
      detail: volume.driver,
      host: host.name,
    },
    record: volume,
    labels: volume.labels,
    node: host.name,
    host,
  };
}

/** A network of one host's engine: its id is the engine's short one, as docker network ls shows it. */
function networkRow(network: NetworkRecord, host: Host): Resource {
  return {
    row: {
      id: network.id.slice(0, 12),
      name: network.name,
      type: 'local_network',
      ...(network.stack ? { stack: network.stack } : {}),
      detail: network.driver,
      host: host.name,
    },
    record: network,
    labels: network.labels,
    node: host.name,
    host,
  };
}

/** The docker domain's index: each host's last container inventory, and its container events since. */
export class DockerIndexer implements Indexer {
  readonly types = ['container', 'volume', 'local_network'] as const;
  private readonly inventories = new Map<string, InventoryEntry>();
  /** Each host's container events: restarts, failures and the newest state of its containers. */
  readonly events = new ContainerEvents();

  constructor(private readonly context: IndexContext) {}

  take(host: Host, kind: string, payload: unknown, receivedAt: number): void {
    if (kind === 'container_event') {
      // An event tells a container's new state: the same things are listed.
      if (this.events.take(host.id, payload as ContainerEvent, receivedAt)) this.context.changed('containers', host.id, false);
      return;
    }
    const inventory = payload as ContainerInventory;
    const listing = listingOf(inventory);
    const listed = this.inventories.get(host.id)?.listing !== listing;
    this.inventories.set(host.id, { inventory: { ...inventory, taken_unix_ms: receivedAt }, hostId: host.id, receivedAt, listing });
    this.context.changed('containers', host.id, listed);
  }

  forget(hostId: string): void {
    this.inventories.delete(hostId);
    this.events.forget(hostId);
  }

  prune(now: number): void {
    this.events.prune(now);
  }

  /** A host's last inventory, as its agent reported it. */
  inventory(hostId: string): InventoryEntry | undefined {
    return this.inventories.get(hostId);
  }

  inventoryEntries(): InventoryEntry[] {
    return [...this.inventories.values()];
  }

  rows(filter: RowFilter, hosts: ReadonlyMap<string, Host>): Resource[] {
    const containers = wantsType(filter, 'container');
    const volumes = wantsType(filter, 'volume');
    const networks = wantsType(filter, 'local_network');
    const rows: Resource[] = [];
    if (!containers && !volumes && !networks) return rows;
    const { match } = filter;
    for (const entry of this.inventories.values()) {
      const host = hosts.get(entry.hostId);
      if (!host) continue;
      for (const inventoried of containers ? entry.inventory.containers : []) {
        if (match && !match(inventoried.id.slice(0, 12), inventoried.name, host.name, inventoried.id, inventoried)) continue;
        // An engine event newer than the inventory tells the container's state first.
        const state = this.events.stateSince(host.id, inventoried.id, entry.receivedAt);
        rows.push(containerRow(state == null || state === inventoried.state ? inventoried : { ...inventoried, state }, host));
      }
      for (const volume of volumes ? entry.inventory.volumes : []) {
        if (!match || match(volume.name, volume.name, host.name, undefined, volume)) rows.push(volumeRow(volume, host));
      }
      for (const network of networks ? (entry.inventory.networks ?? []) : []) {
        if (!match || match(network.id.slice(0, 12), network.name, host.name, network.id, network)) rows.push(networkRow(network, host));
      }
    }
    return rows;
  }

  digest(resource: Resource, _hosts: readonly Host[], now: number): Digest {
    const host = resource.host as Host;
    if (resource.row.type === 'volume') {
      const volume = resource.record as VolumeRecord;
      return {
        id: volume.name,
        name: volume.name,
        type: 'volume',
        state: 'present',
        since_unix_ms: null,
        details: { driver: volume.driver, scope: volume.scope, labels: volume.labels, stack: volume.stack },
        related: [{ type: 'host', id: host.id, name: host.name, relation: 'on', host: host.name }],
        recent_failures: [],
        host: host.name,
      };
    }
    if (resource.row.type === 'local_network') {
      const network = resource.record as NetworkRecord;
      return {
        id: network.id.slice(0, 12),
        name: network.name,
        type: 'local_network',
        state: 'present',
        since_unix_ms: null,
        details: { driver: network.driver, scope: network.scope, attachable: network.attachable, labels: network.labels, stack: network.stack },
        related: [{ type: 'host', id: host.id, name: host.name, relation: 'on', host: host.name }],
        recent_failures: [],
        host: host.name,
      };
    }
    const container = resource.record as ContainerRecord;
    const inventoryAt = this.inventories.get(host.id)?.receivedAt ?? 0;
    return {
      id: container.id.slice(0, 12),
      name: container.name,
      type: 'container',
      // An engine event newer than the last inventory tells the state first.
      state: this.events.stateSince(host.id, container.id, inventoryAt) ?? container.state,
      since_unix_ms: container.created_unix_ms,
      details: { image: container.image, status: container.status, labels: container.labels, created_unix_ms: container.created_unix_ms },
      related: [{ type: 'host', id: host.id, name: host.name, relation: 'runs_on', host: host.name }],
      recent_failures: this.events.recentFailures(host.id, host.name, container.id),
      restarts: {
        ...this.events.restarts(host.id, container.id, now),
        ...(container.restart_count === undefined ? {} : { engine_count: container.restart_count }),
      },
      host: host.name,
    };
  }

  /** A host runs the containers of its last inventory. */
  related(resource: Resource): Related[] {
    const { host } = resource;
    if (resource.row.type !== 'host' || !host) return [];
    return (this.inventories.get(host.id)?.inventory.containers ?? []).map((c) => ({
      type: 'container',
      id: c.id.slice(0, 12),
      name: c.name,
      relation: 'runs',
      host: host.name,
    }));
  }
}
