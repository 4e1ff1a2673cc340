import type { GuestInventory } from '../../shared/domains/proxmox/guest-inventory.ts';
import { proxmoxDomain } from '../../shared/domains/proxmox/proxmox-domain.ts';
import type { Host } from '../agents/agent-registry.ts';
import { type Claim, holds, holdsRole } from '../agents/claims.ts';
import type { IndexContext, Indexer } from './indexer.ts';

export interface GuestEntry {
  inventory: GuestInventory;
  hostId: string;
  receivedAt: number;
}

/** The proxmox domain's index: each PVE agent's last report of its cluster's guests, taken only from a member of that cluster. */
export class ProxmoxIndexer implements Indexer {
  readonly domain = proxmoxDomain;
  readonly guests = new Map<string, GuestEntry>();

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

  dropLostRoles(claims: ReadonlyMap<string, Claim[]>): void {
    for (const [hostId, entry] of this.guests) {
      const cluster = entry.inventory.cluster;
      if (!claims.has(hostId) || (cluster !== null && !holds(claims, hostId, 'pve-member', cluster))) {
        this.guests.delete(hostId);
        this.context.changed('guests', hostId);
      }
    }
  }
}
