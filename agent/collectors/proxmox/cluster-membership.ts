import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';
import { failureClassOf, proxmoxFailure } from './proxmox-failure.ts';
import type { PveApi, PveClusterMember } from './pve-api.ts';

interface ClusterNode {
  name: string;
  nodeId: number | null;
  online: boolean;
  ip: string | null;
  /** The node whose API answered. */
  local: boolean;
}

export interface Membership {
  /** null for a standalone node. */
  cluster: string | null;
  quorate: boolean | null;
  localNode: string | null;
  nodes: ClusterNode[];
}

/**
 * Reads /cluster/status. The node that answers is always in it, so an empty
 * list means a token whose ACLs hide it, which is an authorization failure and
 * not an empty cluster.
 */
export function readMembership(members: PveClusterMember[], tokenId: string): Membership {
  if (members.length === 0) {
    throw proxmoxFailure('authorization', `the token ${tokenId} sees no node in /cluster/status, although the node answering is one`, {
      hint: `Give the token Sys.Audit on /, such as pveum acl modify / --tokens '${tokenId}' --roles PVEAuditor.`,
    });
  }
  const cluster = members.find((member) => member.type === 'cluster');
  const nodes = members
    .filter((member) => member.type === 'node')
    .map((member) => ({
      name: member.name,
      nodeId: member.nodeid ?? null,
      online: member.online ?? false,
      ip: member.ip ?? null,
      local: member.local ?? false,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return {
    cluster: cluster?.name ?? null,
    quorate: cluster?.quorate ?? null,
    localNode: nodes.find((node) => node.local)?.name ?? null,
    nodes,
  };
}

const FRESH_MS = 60_000;

/**
 * What the agent knows of its cluster: its own node's name (for tools called
 * without a node, and for the Hello facts), the cluster name and the node
 * names (to answer an unknown node with the closest ones). Node names change
 * rarely, so a minute-old view is good enough; a refusal is remembered as long,
 * so a token without Sys.Audit does not cost an extra request per call.
 */
export class MembershipCache {
  private last: { membership: Membership; at: number } | undefined;
  private refusedAt: number | undefined;

  constructor(private readonly onChange: (membership: Membership) => void) {}

  current(): Membership | undefined {
    return this.last?.membership;
  }

  /** Records a fresh reading (proxmox_status reads /cluster/status anyway). */
  observe(membership: Membership): void {
    const before = this.last?.membership;
    this.last = { membership, at: Date.now() };
    this.refusedAt = undefined;
    if (before?.localNode !== membership.localNode || before?.cluster !== membership.cluster) this.onChange(membership);
  }

  async get(api: PveApi, maxAgeMs = FRESH_MS): Promise<Membership> {
    if (this.last && Date.now() - this.last.at <= maxAgeMs) return this.last.membership;
    const membership = readMembership(await api.clusterStatus(), api.tokenId);
    this.observe(membership);
    return membership;
  }

  /** The agent's own node, which tools default to. */
  async localNode(api: PveApi): Promise<string> {
    const membership = await this.get(api);
    if (!membership.localNode) {
      throw new FleetError('invalid_argument', 'the API does not say which node it runs on', {
        collector: 'proxmox',
        hint: 'Pass node explicitly; proxmox_status lists the nodes.',
      });
    }
    return membership.localNode;
  }

  /** The local node if it can be learned without failing the call; null otherwise. */
  async answeredBy(api: PveApi): Promise<string | null> {
    if (this.last) return this.last.membership.localNode;
    if (this.refusedAt !== undefined && Date.now() - this.refusedAt <= FRESH_MS) return null;
    try {
      return (await this.get(api)).localNode;
    } catch (error) {
      if (failureClassOf(error) === 'authorization') this.refusedAt = Date.now();
      return null;
    }
  }

  /**
   * Refuses a node the cluster does not have, naming the closest ones. When the
   * token may not read the membership, the API itself will answer for the node.
   */
  async requireNode(api: PveApi, node: string): Promise<void> {
    if (this.refusedAt !== undefined && Date.now() - this.refusedAt <= FRESH_MS) return;
    let membership: Membership;
    try {
      membership = await this.get(api);
      // A node added since the last reading: look once more before saying it does not exist.
      if (!membership.nodes.some((member) => member.name === node)) membership = await this.get(api, 0);
    } catch (error) {
      if (failureClassOf(error) !== 'authorization') throw error;
      this.refusedAt = Date.now();
      return;
    }
    if (membership.nodes.some((member) => member.name === node)) return;
    throw unknownNode(
      node,
      membership.nodes.map((member) => member.name),
    );
  }
}

/** A node the cluster does not have, with the closest names it does. */
export function unknownNode(node: string, names: string[]): FleetError {
  const closest = closestNames(node, names);
  return new FleetError('not_found', `the cluster has no node "${node}"`, {
    collector: 'proxmox',
    hint: `${closest.length ? `Closest nodes: ${closest.join(', ')}. ` : ''}Nodes: ${[...names].sort().join(', ')}.`,
    details: { closest },
  });
}
