import type { GuestInventory, GuestRecord } from '../../../shared/domains/proxmox/guest-inventory.ts';
import type { Host } from '../../agents/agent-registry.ts';
import { type Claim, holds, holdsRole } from '../../agents/claims.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import { type Digest, passes, type Resource, type RowFilter, wantsType } from '../../index/resource.ts';

export interface GuestEntry {
  inventory: GuestInventory;
  hostId: string;
  receivedAt: number;
}

/** A guest as its rows keep it: the guest, and the agent that reported it. */
type ReportedGuest = GuestRecord & { reported_by: string };

/** The proxmox domain's index: each PVE agent's last report of its cluster's guests, taken only from a member of that cluster. */
export class ProxmoxIndexer implements Indexer {
  readonly types = ['guest'] as const;
  private readonly guests = new Map<string, GuestEntry>();

  constructor(private readonly context: IndexContext) {}

  take(host: Host, kind: string, payload: unknown, receivedAt: number): void {
    const inventory = { ...(payload as GuestInventory), taken_unix_ms: receivedAt };
    if (inventory.cluster !== null && !holdsRole(host, 'pve-member', inventory.cluster, this.context.registry.list(), this.context.evidence)) {
      this.context.refuse(host, kind, `is about PVE cluster ${inventory.cluster}, whose membership of this agent is not approved or proven`);
      return;
    }
    this.guests.set(host.id, { inventory, hostId: host.id, receivedAt });
    this.context.changed('guests', host.id);
  }

  forget(hostId: string): void {
    this.guests.delete(hostId);
  }

  /** Each PVE agent's last report of its cluster's guests. */
  guestEntries(): GuestEntry[] {
    return [...this.guests.values()];
  }

  dropLostRoles(claims: ReadonlyMap<string, Claim[]>): void {
    for (const [hostId, entry] of this.guests) {
      const cluster = entry.inventory.cluster;
      if (!claims.has(hostId) || (cluster !== null && !holds(claims, hostId, 'pve-member', cluster))) {
        this.guests.delete(hostId);
        this.context.changed('guests', hostId);
      }
    }
  }

  /**
   * The guests of every Proxmox VE cluster, each once: agents of one cluster
   * report the same guests, and the newest report of the cluster wins. A node
   * outside any cluster is its own. Few enough to build whole, then keep to the filter.
   */
  rows(filter: RowFilter, byId: ReadonlyMap<string, Host>): Resource[] {
    if (!wantsType(filter, 'guest')) return [];
    const newest = new Map<string, { host: Host; cluster: string | null; guests: GuestRecord[]; taken: number }>();
    for (const entry of this.guests.values()) {
      const host = byId.get(entry.hostId);
      if (!host) continue;
      const { cluster, node, guests, taken_unix_ms } = entry.inventory;
      const key = cluster ? `cluster:${cluster}` : `node:${node ?? host.id}`;
      const current = newest.get(key);
      // An online agent's report beats an offline one's, then the newer beats the older.
      const better =
        !current ||
        (host.state === 'online') > (current.host.state === 'online') ||
        ((host.state === 'online') === (current.host.state === 'online') && taken_unix_ms > current.taken);
      if (better) newest.set(key, { host, cluster, guests, taken: taken_unix_ms });
    }
    // The row names the agent on the guest's own node when there is one, else the agent that reported it.
    const nodeKey = (cluster: unknown, node: unknown) => JSON.stringify([cluster ?? null, node]);
    const agentOnPveNode = new Map<string, Host>();
    for (const host of byId.values()) {
      const facts = host.hello?.facts;
      const key = nodeKey(facts?.proxmox_cluster, facts?.proxmox_node);
      if (facts?.proxmox_node !== undefined && !agentOnPveNode.has(key)) agentOnPveNode.set(key, host);
    }
    const rows: Resource[] = [];
    for (const { host: reporter, cluster, guests } of newest.values()) {
      for (const guest of guests) {
        const host = agentOnPveNode.get(nodeKey(cluster, guest.node)) ?? reporter;
        const resource: Resource = {
          row: {
            id: String(guest.vmid),
            name: guest.name || String(guest.vmid),
            type: 'guest',
            state: guest.template ? 'template' : guest.status,
            detail: `${guest.type} on ${guest.node}`,
            host: host.name,
            ...(cluster ? { cluster } : {}),
          },
          record: { ...guest, reported_by: reporter.name } satisfies ReportedGuest,
          labels: Object.fromEntries(guest.tags.map((tag) => [tag, ''])),
          node: guest.node,
          host,
        };
        if (passes(filter, resource)) rows.push(resource);
      }
    }
    return rows;
  }

  digest(resource: Resource, _hosts: readonly Host[], now: number): Digest {
    const { row } = resource;
    const guest = resource.record as ReportedGuest;
    const host = resource.host as Host;
    const onNode = host.hello?.facts.proxmox_node === guest.node;
    return {
      id: row.id,
      name: row.name,
      type: 'guest',
      state: row.state ?? guest.status,
      since_unix_ms: guest.status === 'running' && guest.uptime_s !== null ? now - guest.uptime_s * 1000 : null,
      details: {
        vmid: guest.vmid,
        guest_type: guest.type,
        node: guest.node,
        status: guest.status,
        template: guest.template,
        cpu_percent: guest.cpu_percent,
        cpus: guest.cpus,
        memory_used_bytes: guest.memory_used_bytes,
        memory_max_bytes: guest.memory_max_bytes,
        disk_max_bytes: guest.disk_max_bytes,
        uptime_s: guest.uptime_s,
        tags: guest.tags,
        lock: guest.lock,
        reported_by: guest.reported_by,
      },
      related: [{ type: 'host', id: host.id, name: host.name, relation: onNode ? 'runs_on' : 'reported_by', host: host.name }],
      recent_failures: [],
      host: host.name,
      ...(row.cluster ? { cluster: row.cluster } : {}),
    };
  }
}
