import type { Host } from '../../agents/agent-registry.ts';
import type { FleetIndex } from '../../index/fleet-index.ts';
import { SwarmIndexer } from './swarm-indexer.ts';
import { agentOnNode } from './swarm-nodes.ts';

/** The name grants match for a swarm resource named by id or name. */
export function swarmResourceName(index: FleetIndex, clusterId: string, kind: string, value: string): string {
  const snapshot = index.indexer(SwarmIndexer).swarm(clusterId)?.snapshot;
  if (!snapshot) return value;
  const match = (id: string) => id === value || (value.length >= 6 && id.startsWith(value));
  const found =
    kind === 'service'
      ? snapshot.services.find((s) => match(s.id))?.name
      : kind === 'node'
        ? snapshot.nodes.find((n) => match(n.id))?.hostname
        : kind === 'task'
          ? snapshot.tasks.find((t) => match(t.id))?.name
          : kind === 'secret'
            ? snapshot.secrets.find((s) => match(s.id))?.name
            : kind === 'config'
              ? snapshot.configs.find((c) => match(c.id))?.name
              : kind === 'network'
                ? snapshot.networks.find((n) => match(n.id))?.name
                : undefined;
  return found ?? value;
}

/** The connected agent on the node a task runs on (the index knows the task), with the task's full id. */
export function agentOnTaskNode(hosts: readonly Host[], index: FleetIndex, clusterId: string, ref: string): { host: Host; taskId: string } | undefined {
  const snapshot = index.indexer(SwarmIndexer).swarm(clusterId)?.snapshot;
  const task =
    snapshot?.tasks.find((t) => t.id === ref || (ref.length >= 6 && t.id.startsWith(ref))) ??
    snapshot?.tasks.find((t) => t.name === ref && t.desired_state === 'running');
  if (!task?.node_id) return undefined;
  // The node id is the agent's claim: an agent of another swarm, or two agents naming one node, route nothing.
  const host = agentOnNode(
    hosts.filter((h) => h.hello?.facts.swarm_id === clusterId),
    task.node_id,
  );
  const claimants = hosts.filter((h) => h.hello?.facts.swarm_node_id === task.node_id);
  return host?.session && host.state !== 'offline' && claimants.length === 1 ? { host, taskId: task.id } : undefined;
}
