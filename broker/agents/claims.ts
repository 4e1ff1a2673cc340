import type { GuestInventory } from '../../shared/domains/proxmox/guest-inventory.ts';
import { type AgentRole, ANY_SCOPE } from '../store/agent-roles-table.ts';
import type { Host } from './agent-registry.ts';

/**
 * How the broker came to believe a claim: the operator granted the role
 * (join token or `fleetmesh agents approve`), the shared object itself
 * confirmed it (a trusted member's guest report), or nothing yet (the agent
 * is served as a plain host).
 */
type ClaimStatus = 'approved' | 'proven' | 'pending';

/** One statement of an agent that would carry power over a shared object (docs/claims.md). */
export interface Claim {
  role: AgentRole;
  /** The swarm id, or the PVE cluster name. */
  object: string;
  /** The node the agent says it runs on inside that object (swarm node id, PVE node name). */
  node: string;
  status: ClaimStatus;
}

/** What the broker already trusts about shared objects: only ever built from reports of role holders. */
export interface ClaimEvidence {
  guestEntries(): { inventory: GuestInventory; hostId: string }[];
}

type Stated = Omit<Claim, 'status'>;

/** What an agent says of itself in its Hello facts that would give it a role. */
export function statedClaims(facts: Record<string, string | number | boolean>): Stated[] {
  const claims: Stated[] = [];
  if (facts.swarm_role === 'manager' && typeof facts.swarm_id === 'string' && facts.swarm_id) {
    claims.push({ role: 'swarm-manager', object: facts.swarm_id, node: String(facts.swarm_node_id ?? '') });
  }
  if (typeof facts.proxmox_cluster === 'string' && facts.proxmox_cluster) {
    claims.push({ role: 'pve-member', object: facts.proxmox_cluster, node: String(facts.proxmox_node ?? '') });
  }
  return claims;
}

function approved(host: Host, claim: Stated): boolean {
  return host.roles.some((grant) => grant.role === claim.role && (grant.scope === ANY_SCOPE || grant.scope === claim.object));
}

/**
 * Whether the shared object itself, as trusted agents reported it, shows the
 * agent's node in that role. A swarm never does: a node id is no secret
 * (every worker's `docker info` lists the managers'), so a trusted manager's
 * snapshot that lists the claimed node as a manager says nothing of which
 * agent runs there. An agent that named the node of a manager no agent runs
 * on was once proven that way and received swarm secrets; a manager claim
 * now waits for the operator, however many nodes the swarm shows.
 */
function confirmed(host: Host, claim: Stated, evidence: ClaimEvidence): boolean {
  if (!claim.node || claim.role === 'swarm-manager') return false;
  return evidence
    .guestEntries()
    .some((entry) => entry.hostId !== host.id && entry.inventory.cluster === claim.object && entry.inventory.guests.some((g) => g.node === claim.node));
}

/**
 * Every claim of every agent, with how far it is believed. A proof names a
 * node; when two agents name the same node of the same object, neither is
 * proven by it (one of them copied the other's facts), and only the
 * operator's approval settles it.
 */
export function assessClaims(hosts: readonly Host[], evidence: ClaimEvidence): Map<string, Claim[]> {
  const statedBy = new Map(hosts.map((host) => [host.id, statedClaims(host.hello?.facts ?? {})]));
  const nodeClaims = new Map<string, number>();
  const nodeKey = (claim: Stated) => JSON.stringify([claim.role, claim.object, claim.node]);
  for (const claims of statedBy.values()) for (const claim of claims) nodeClaims.set(nodeKey(claim), (nodeClaims.get(nodeKey(claim)) ?? 0) + 1);
  const result = new Map<string, Claim[]>();
  for (const host of hosts) {
    const claims = (statedBy.get(host.id) ?? []).map((claim): Claim => {
      if (approved(host, claim)) return { ...claim, status: 'approved' };
      const unique = (nodeClaims.get(nodeKey(claim)) ?? 0) === 1;
      return { ...claim, status: unique && confirmed(host, claim, evidence) ? 'proven' : 'pending' };
    });
    result.set(host.id, claims);
  }
  return result;
}

/** Whether assessed claims give an agent a role over one object (approved or proven). */
export function holds(claims: ReadonlyMap<string, Claim[]>, hostId: string, role: AgentRole, object: string): boolean {
  return (claims.get(hostId) ?? []).some((claim) => claim.role === role && claim.object === object && claim.status !== 'pending');
}

/** Whether an agent holds a role over one object now (approved or proven). */
export function holdsRole(host: Host, role: AgentRole, object: string, hosts: readonly Host[], evidence: ClaimEvidence): boolean {
  return holds(assessClaims(hosts, evidence), host.id, role, object);
}
