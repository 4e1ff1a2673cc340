import type { AgentRoleDeclaration } from '../../agents/claims.ts';
import { ProxmoxIndexer } from './proxmox-indexer.ts';

/**
 * An agent whose PVE node is in a cluster claims membership of it. Another
 * trusted member's guest report that shows guests on the claimed node proves
 * it: the cluster itself says the node is one of its own.
 */
export const pveMemberRole: AgentRoleDeclaration = {
  name: 'pve-member',
  claim: (facts) =>
    typeof facts.proxmox_cluster === 'string' && facts.proxmox_cluster ? { object: facts.proxmox_cluster, node: String(facts.proxmox_node ?? '') } : undefined,
  proves: (claim, claimantId, evidence) =>
    evidence
      .indexer(ProxmoxIndexer)
      .guestEntries()
      .some((entry) => entry.hostId !== claimantId && entry.inventory.cluster === claim.object && entry.inventory.guests.some((g) => g.node === claim.node)),
};
