import type { AgentRoleDeclaration } from '../../agents/claims.ts';

/**
 * An agent on a manager node claims the swarm its engine manages. Nothing the
 * swarm reports proves which agent runs on a manager: a node id is no secret
 * (every worker's `docker info` lists the managers'), and an agent that named
 * the node of a manager no agent runs on was once proven that way and received
 * swarm secrets. So a manager claim waits for the operator, however many
 * nodes the swarm shows.
 */
export const swarmManagerRole: AgentRoleDeclaration = {
  name: 'swarm-manager',
  claim: (facts) =>
    facts.swarm_role === 'manager' && typeof facts.swarm_id === 'string' && facts.swarm_id
      ? { object: facts.swarm_id, node: String(facts.swarm_node_id ?? '') }
      : undefined,
};
