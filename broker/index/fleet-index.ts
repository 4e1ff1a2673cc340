import { EventEmitter } from 'node:events';
import type { Logger } from '../../shared/log/logger.ts';
import type { GuestInventory } from '../../shared/proxmox/guest-inventory.ts';
import { isInvoluntaryEnd } from '../../shared/swarm/convergence.ts';
import type { ContainerInventory, SwarmSnapshot } from '../../shared/swarm/records.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { BrokerStore } from '../store/broker-store.ts';

export interface SwarmEntry {
  snapshot: SwarmSnapshot;
  /** The agent that reported it. */
  reportedBy: string;
  receivedAt: number;
}

export interface InventoryEntry {
  inventory: ContainerInventory;
  hostId: string;
  receivedAt: number;
}

export interface GuestEntry {
  inventory: GuestInventory;
  hostId: string;
  receivedAt: number;
}

interface IndexEvents {
  changed: [kind: 'swarm' | 'containers' | 'guests', key: string];
}

const KEEP_FAILURES_MS = 8 * 86_400_000;

/**
 * What the broker knows of the fleet's resources, kept current from what
 * agents report: each host's containers and volumes, each swarm's whole
 * state as its managers see it, and each Proxmox VE cluster's guests. find, describe, metrics and recommendations
 * read it; nothing here asks an agent.
 */
export class FleetIndex extends EventEmitter<IndexEvents> {
  private readonly swarms = new Map<string, SwarmEntry>();
  private readonly inventories = new Map<string, InventoryEntry>();
  private readonly guests = new Map<string, GuestEntry>();
  private pruner: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: AgentRegistry,
    private readonly store: BrokerStore,
    private readonly log: Logger,
  ) {
    super();
  }

  start(): void {
    this.registry.on('report', (host, kind, payload) => this.onReport(host, kind, payload));
    this.registry.on('revoked', (host) => {
      this.inventories.delete(host.id);
      this.guests.delete(host.id);
    });
    this.pruner = setInterval(() => this.prune(), 3_600_000);
    this.pruner.unref();
  }

  stop(): void {
    clearInterval(this.pruner);
  }

  swarmEntries(): SwarmEntry[] {
    return [...this.swarms.values()];
  }

  swarm(clusterId: string): SwarmEntry | undefined {
    return this.swarms.get(clusterId);
  }

  inventoryEntries(): InventoryEntry[] {
    return [...this.inventories.values()];
  }

  inventory(hostId: string): InventoryEntry | undefined {
    return this.inventories.get(hostId);
  }

  /** Each Proxmox VE agent's last report of its cluster's guests. */
  guestEntries(): GuestEntry[] {
    return [...this.guests.values()];
  }

  /** When a service's tasks ended involuntarily, as far back as the broker has seen (up to 8 days). */
  taskFailures(serviceId: string, sinceUnixMs: number): number[] {
    return (this.store.db.prepare('SELECT at FROM task_failures WHERE service_id = ? AND at >= ?').all(serviceId, sinceUnixMs) as { at: number }[]).map(
      (row) => row.at,
    );
  }

  private onReport(host: Host, kind: string, payload: unknown): void {
    try {
      if (kind === 'swarm_snapshot') this.takeSnapshot(host, payload as SwarmSnapshot);
      else if (kind === 'container_inventory') {
        this.inventories.set(host.id, { inventory: payload as ContainerInventory, hostId: host.id, receivedAt: Date.now() });
        this.emit('changed', 'containers', host.id);
      } else if (kind === 'proxmox_guests') {
        const inventory = payload as GuestInventory;
        if (!Array.isArray(inventory?.guests)) return;
        this.guests.set(host.id, { inventory, hostId: host.id, receivedAt: Date.now() });
        this.emit('changed', 'guests', host.id);
      }
    } catch (error) {
      this.log.warn('could not index a report', { agent: host.name, kind, error: (error as Error).message });
    }
  }

  private takeSnapshot(host: Host, snapshot: SwarmSnapshot): void {
    if (!snapshot?.cluster_id || !Array.isArray(snapshot.services)) return;
    const current = this.swarms.get(snapshot.cluster_id);
    if (current && current.snapshot.taken_unix_ms > snapshot.taken_unix_ms) return;
    this.swarms.set(snapshot.cluster_id, { snapshot, reportedBy: host.id, receivedAt: Date.now() });
    const services = new Map(snapshot.services.map((s) => [s.id, s]));
    const insert = this.store.db.prepare('INSERT OR IGNORE INTO task_failures (task_id, cluster_id, service_id, at) VALUES (?, ?, ?, ?)');
    this.store.db.transaction(() => {
      for (const task of snapshot.tasks) {
        const service = services.get(task.service_id);
        if (service && isInvoluntaryEnd(task, service) && task.timestamp_unix_ms > 0)
          insert.run(task.id, snapshot.cluster_id, task.service_id, task.timestamp_unix_ms);
      }
    })();
    this.emit('changed', 'swarm', snapshot.cluster_id);
  }

  private prune(): void {
    this.store.db.prepare('DELETE FROM task_failures WHERE at < ?').run(Date.now() - KEEP_FAILURES_MS);
  }
}
