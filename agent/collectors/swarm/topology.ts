import { blockingConstraint, schedulable } from '../../../shared/domains/swarm/constraints.ts';
import type { NodeRecord, SwarmSnapshot } from '../../../shared/engine/records.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

type Vertex = { id: string; name: string; type: string; detail?: string };
type Edge = { from: string; to: string; detail?: string };

function findNode(snapshot: SwarmSnapshot, wanted: string): NodeRecord {
  const node = snapshot.nodes.find((n) => n.id === wanted || n.id.startsWith(wanted) || n.hostname.toLowerCase() === wanted.toLowerCase());
  if (!node) {
    throw new FleetError('not_found', `no node "${wanted}" in this swarm`, { hint: `Nodes: ${snapshot.nodes.map((n) => n.hostname).join(', ')}.` });
  }
  return node;
}

/** get_topology: the swarm as a graph of services and networks, nodes and services, or the effect of draining one node. */
export function topology(snapshot: SwarmSnapshot, view: 'network' | 'placement' | 'drain-impact', nodeWanted?: string) {
  const running = snapshot.tasks.filter((t) => t.desired_state === 'running');
  if (view === 'network') {
    const networks = new Map(snapshot.networks.map((n) => [n.id, n]));
    const vertices: Vertex[] = [
      ...snapshot.services.map((s) => ({ id: s.id, name: s.name, type: 'service', detail: s.image })),
      ...snapshot.networks.map((n) => ({ id: n.id, name: n.name, type: 'network', detail: n.driver })),
    ];
    const edges: Edge[] = snapshot.services.flatMap((s) =>
      s.networks.map((id) => ({ from: s.name, to: networks.get(id)?.name ?? id, detail: networks.get(id)?.driver })),
    );
    return { view, nodes: vertices, edges };
  }
  if (view === 'placement') {
    const services = new Map(snapshot.services.map((s) => [s.id, s]));
    const counts = new Map<string, number>();
    for (const task of running) {
      const key = `${task.node_id}|${task.service_id}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const vertices: Vertex[] = [
      ...snapshot.nodes.map((n) => ({ id: n.id, name: n.hostname, type: 'node', detail: `${n.role}, ${n.availability}, ${n.state}` })),
      ...snapshot.services.map((s) => ({ id: s.id, name: s.name, type: 'service', detail: s.image })),
    ];
    const edges: Edge[] = [...counts].map(([key, count]) => {
      const [nodeId = '', serviceId = ''] = key.split('|');
      return {
        from: snapshot.nodes.find((n) => n.id === nodeId)?.hostname ?? nodeId,
        to: services.get(serviceId)?.name ?? serviceId,
        detail: `${count} task${count === 1 ? '' : 's'}`,
      };
    });
    return { view, nodes: vertices, edges };
  }
  if (!nodeWanted) throw new FleetError('invalid_argument', 'drain-impact needs node', { hint: 'Name the node to drain (id or hostname).' });
  const node = findNode(snapshot, nodeWanted);
  const here = new Set(running.filter((t) => t.node_id === node.id).map((t) => t.service_id));
  const candidates = snapshot.nodes.filter((n) => n.id !== node.id && schedulable(n));
  const vertices: Vertex[] = [{ id: node.id, name: node.hostname, type: 'node', detail: 'to drain' }];
  const edges: Edge[] = [];
  const stranded: { service: string; detail: string }[] = [];
  for (const service of snapshot.services.filter((s) => here.has(s.id))) {
    vertices.push({ id: service.id, name: service.name, type: 'service', detail: service.mode });
    if (service.mode === 'global' || service.mode === 'global-job') {
      stranded.push({ service: service.name, detail: 'global: draining stops its task on this node rather than moving it' });
      continue;
    }
    const takers = candidates.filter((n) => !blockingConstraint(service.constraints, n));
    if (takers.length === 0) {
      const blocking = candidates.map((n) => blockingConstraint(service.constraints, n)).find(Boolean);
      stranded.push({
        service: service.name,
        detail: candidates.length === 0 ? 'no other node is active and ready' : `placement constraint ${blocking} holds on no other active node`,
      });
      continue;
    }
    for (const taker of takers) edges.push({ from: service.name, to: taker.hostname, detail: 'could take its tasks' });
  }
  for (const taker of candidates) vertices.push({ id: taker.id, name: taker.hostname, type: 'node', detail: `${taker.role}, ${taker.availability}` });
  return { view, nodes: vertices, edges, stranded };
}
