import type { Indexer, IndexerClass } from '../index/indexer.ts';
import { type AgentRole, ANY_SCOPE } from '../store/agent-roles-table.ts';
import type { Host } from './agent-registry.ts';

/**
 * How the broker came to believe a claim: the operator granted the role
 * (join token or `fleetmesh agents approve`), the shared object itself
 * confirmed it (what trusted holders of the role reported), or nothing yet
 * (the agent is served as a plain host).
 */
type ClaimStatus = 'approved' | 'proven' | 'pending';

/** One statement of an agent that would carry power over a shared object (docs/claims.md). */
export interface Claim {
  role: AgentRole;
  /** The shared object, as its domain names it (a cluster's id or name). */
  object: string;
  /** The node the agent says it runs on inside that object. */
  node: string;
  status: ClaimStatus;
}

type Stated = Omit<Claim, 'status'>;

/**
 * A role over an object several agents share, declared by the broker half of
 * the domain the object belongs to: what an agent's Hello facts claim, and,
 * where the object can vouch for its members, what proves a claim without the
 * operator.
 */
export interface AgentRoleDeclaration {
  /** The role's name, as join tokens and `fleetmesh agents approve --role` take it. */
  readonly name: AgentRole;
  /** The object an agent claims the role over, and its node there, from its Hello facts; undefined when it claims none. */
  claim(facts: Readonly<Record<string, string | number | boolean>>): { object: string; node: string } | undefined;
  /**
   * Whether what trusted holders of the role reported of the object shows the
   * claimed node in it, reported by an agent other than the claimant. Without
   * this, only the operator's approval gives the role.
   */
  proves?(claim: Stated, claimantId: string, evidence: ClaimEvidence): boolean;
}

/** What the broker already trusts about shared objects (only ever built from reports of role holders), and the roles the domains declare. */
export interface ClaimEvidence {
  readonly roles: readonly AgentRoleDeclaration[];
  /** A domain's indexer, for its role's proof. */
  indexer<I extends Indexer>(Class: IndexerClass<I>): I;
}

/** What an agent says of itself in its Hello facts that would give it a role, in the roles' order. */
export function statedClaims(facts: Record<string, string | number | boolean>, roles: readonly AgentRoleDeclaration[]): Stated[] {
  return roles.flatMap((role) => {
    const claimed = role.claim(facts);
    return claimed ? [{ role: role.name, ...claimed }] : [];
  });
}

function approved(host: Host, claim: Stated): boolean {
  return host.roles.some((grant) => grant.role === claim.role && (grant.scope === ANY_SCOPE || grant.scope === claim.object));
}

/** Whether the shared object itself, as trusted agents reported it, shows the agent's node in that role. */
function confirmed(host: Host, claim: Stated, evidence: ClaimEvidence): boolean {
  if (!claim.node) return false;
  return evidence.roles.find((role) => role.name === claim.role)?.proves?.(claim, host.id, evidence) ?? false;
}

/**
 * Every claim of every agent, with how far it is believed. A proof names a
 * node; when two agents name the same node of the same object, neither is
 * proven by it (one of them copied the other's facts), and only the
 * operator's approval settles it.
 */
export function assessClaims(hosts: readonly Host[], evidence: ClaimEvidence): Map<string, Claim[]> {
  const statedBy = new Map(hosts.map((host) => [host.id, statedClaims(host.hello?.facts ?? {}, evidence.roles)]));
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
