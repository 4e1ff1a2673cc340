import type { SwarmSnapshot } from '../../../shared/engine/records.ts';
import type { Host } from '../../agents/agent-registry.ts';

/** The agent running on a swarm node (its engine reported that node id). */
export function agentOnNode(hosts: readonly Host[], nodeId: string): Host | undefined {
  return hosts.find((h) => h.hello?.facts.swarm_node_id === nodeId);
}

/** A node's hostname in a snapshot, else its id. */
export function nodeName(snapshot: SwarmSnapshot, id: string): string {
  return snapshot.nodes.find((n) => n.id === id)?.hostname ?? id;
}
