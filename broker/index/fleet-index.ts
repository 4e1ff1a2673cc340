import { EventEmitter } from 'node:events';
import type { ContainerEvent } from '../../shared/domains/docker/container-event.ts';
import { reportSchemas } from '../../shared/domains/domains.ts';
import type { GuestInventory } from '../../shared/domains/proxmox/guest-inventory.ts';
import { isInvoluntaryEnd } from '../../shared/domains/swarm/convergence.ts';
import type { ContainerInventory, SwarmSnapshot } from '../../shared/domains/swarm/records.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import { assessClaims, holds, holdsRole } from '../agents/claims.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { ContainerEvents } from './container-events.ts';

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

/** Why a report was dropped, for /metrics. */
export type DropReason = 'malformed' | 'not_role_holder' | 'unknown_kind';

/** Counts the reports the index refused (BrokerMetrics implements it). */
export interface ReportRecorder {
  reportDropped(kind: string, reason: DropReason): void;
}

/** The report kinds the domains declare, each with the schema a report must pass first. */
const REPORT_SCHEMAS = reportSchemas();

/** At most one warning per agent in this time, however many bad reports it sends. */
const WARN_EVERY_MS = 60_000;

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
  /** Each host's container events: restarts, failures and the newest state of its containers. */
  readonly containerEvents = new ContainerEvents();
  private readonly warnedAt = new Map<string, number>();
  private pruner: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: AgentRegistry,
    private readonly store: BrokerStore,
    private readonly log: Logger,
    private readonly recorder: ReportRecorder,
  ) {
    super();
  }

  start(): void {
    this.registry.on('report', (host, kind, payload) => this.onReport(host, kind, payload));
    this.registry.on('revoked', (host) => {
      this.inventories.delete(host.id);
      this.containerEvents.forget(host.id);
      this.guests.delete(host.id);
      this.dropLostRoles();
    });
    // A withdrawn approval, or a Hello that claims another swarm, ends what the agent contributed as a role holder.
    this.registry.on('state', () => this.dropLostRoles());
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

  /**
   * Takes one report: checked against its kind's schema, and a report about a
   * shared object (a swarm, a PVE cluster) only from an agent holding the role
   * over that object. Anything else is dropped and counted, and the agent
   * warned about in the log at most once a minute. Times are the broker's
   * receipt time: an agent's clock never orders reports.
   */
  private onReport(host: Host, kind: string, payload: unknown): void {
    const schema = REPORT_SCHEMAS.get(kind);
    if (!schema) {
      // Counted under one label: the kind is the agent's word, and must not grow the metrics without bound.
      this.drop(host, 'other', 'unknown_kind', `is of kind ${JSON.stringify(kind.slice(0, 64))}, which no domain declares`);
      return;
    }
    const receivedAt = Date.now();
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.drop(host, kind, 'malformed', `does not match its schema at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? 'invalid'}`);
      return;
    }
    try {
      if (kind === 'swarm_snapshot') this.takeSnapshot(host, { ...(parsed.data as SwarmSnapshot), taken_unix_ms: receivedAt }, receivedAt);
      else if (kind === 'container_event') {
        if (this.containerEvents.take(host.id, parsed.data as ContainerEvent, receivedAt)) this.emit('changed', 'containers', host.id);
      } else if (kind === 'container_inventory') {
        this.inventories.set(host.id, { inventory: { ...(parsed.data as ContainerInventory), taken_unix_ms: receivedAt }, hostId: host.id, receivedAt });
        this.emit('changed', 'containers', host.id);
      } else {
        const inventory = { ...(parsed.data as GuestInventory), taken_unix_ms: receivedAt };
        if (inventory.cluster !== null && !holdsRole(host, 'pve-member', inventory.cluster, this.registry.list(), this)) {
          this.drop(host, kind, 'not_role_holder', `is about PVE cluster ${inventory.cluster}, whose membership of this agent is not approved or proven`);
          return;
        }
        this.guests.set(host.id, { inventory, hostId: host.id, receivedAt });
        this.emit('changed', 'guests', host.id);
      }
    } catch (error) {
      this.log.warn('could not index a report', { agent: host.name, kind, error: (error as Error).message });
    }
  }

  private drop(host: Host, kind: string, reason: DropReason, why: string): void {
    this.recorder.reportDropped(kind, reason);
    const now = Date.now();
    if (now - (this.warnedAt.get(host.id) ?? 0) < WARN_EVERY_MS) return;
    this.warnedAt.set(host.id, now);
    this.log.warn('report dropped', { agent: host.name, agent_id: host.id, kind, reason, detail: why });
  }

  private takeSnapshot(host: Host, snapshot: SwarmSnapshot, receivedAt: number): void {
    if (!holdsRole(host, 'swarm-manager', snapshot.cluster_id, this.registry.list(), this)) {
      this.drop(host, 'swarm_snapshot', 'not_role_holder', `is about swarm ${snapshot.cluster_id}, of which this agent is no approved or proven manager`);
      return;
    }
    this.swarms.set(snapshot.cluster_id, { snapshot, reportedBy: host.id, receivedAt });
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

  /** Removes what agents contributed as holders of a role they no longer hold (revoked, approval withdrawn, claim changed). */
  private dropLostRoles(): void {
    const claims = assessClaims(this.registry.list(), this);
    for (const [clusterId, entry] of this.swarms) {
      if (!holds(claims, entry.reportedBy, 'swarm-manager', clusterId)) {
        this.swarms.delete(clusterId);
        this.emit('changed', 'swarm', clusterId);
      }
    }
    for (const [hostId, entry] of this.guests) {
      const cluster = entry.inventory.cluster;
      if (!claims.has(hostId) || (cluster !== null && !holds(claims, hostId, 'pve-member', cluster))) {
        this.guests.delete(hostId);
        this.emit('changed', 'guests', hostId);
      }
    }
  }

  private prune(): void {
    this.store.db.prepare('DELETE FROM task_failures WHERE at < ?').run(Date.now() - KEEP_FAILURES_MS);
    this.containerEvents.prune(Date.now());
  }
}
