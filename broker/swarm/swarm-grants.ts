import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Identity } from '../auth/identities.ts';
import { mayRead } from '../auth/visibility.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import { allResources, visible } from '../index/index-resources.ts';

/**
 * What of one swarm an identity may read, decided resource by resource with
 * `visible()`, the rule find and describe apply: a swarm read answers exactly
 * what describe would show of the same resources, and nothing of the rest.
 */
export interface SwarmReadScope {
  /** Every resource of the swarm is visible: answers pass unchanged. */
  whole: boolean;
  /** Nothing of the swarm is visible: the swarm itself is hidden. */
  none: boolean;
  sees(type: string, idOrName: string): boolean;
  /** How many resources of a type the identity sees. */
  count(type: string): number;
}

export function swarmReadScope(identity: Identity, index: FleetIndex, clusterId: string): SwarmReadScope {
  const resources = allResources(index, []).filter((r) => r.snapshot?.cluster_id === clusterId);
  const seen = new Set<string>();
  const counts = new Map<string, number>();
  let hidden = 0;
  for (const resource of resources) {
    if (!visible(identity, resource)) {
      hidden += 1;
      continue;
    }
    counts.set(resource.row.type, (counts.get(resource.row.type) ?? 0) + 1);
    seen.add(`${resource.row.type}:${resource.row.id}`);
    seen.add(`${resource.row.type}:${resource.row.name}`);
  }
  // Without an indexed snapshot nothing can be checked: only an identity that may read every service and node sees the swarm.
  const unchecked = resources.length === 0 && !(mayRead(identity, { type: 'service', name: '\u0000' }) && mayRead(identity, { type: 'node', name: '\u0000' }));
  return {
    whole: !unchecked && hidden === 0,
    none: unchecked || (resources.length > 0 && seen.size === 0),
    sees: (type, ref) => seen.has(`${type}:${ref}`),
    count: (type) => counts.get(type) ?? 0,
  };
}

type Answer = Record<string, unknown>;
const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

/** The service a task name (`service.slot` or `service.nodeid`) belongs to. */
const serviceOfTask = (name: string) => (name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : name);

/** Refuses a read scoped to a resource the identity may not see, as if it did not exist. */
export function checkSwarmReadParams(actionId: string, params: Answer, scope: SwarmReadScope, clusterName: string): void {
  if (scope.whole) return;
  const missing = (kind: string, name: string) =>
    new FleetError('not_found', `no ${kind} "${name}" in swarm ${clusterName}`, { hint: `find with type ${kind} lists the ones you may see.` });
  if (scope.none) throw new FleetError('not_found', 'no swarm is visible to this identity', { hint: 'find lists what you may see.' });
  if (actionId !== 'swarm.logs') return;
  const { service, task, stack } = params as { service?: string; task?: string; stack?: string };
  if (service !== undefined && !scope.sees('service', service)) throw missing('service', service);
  if (task !== undefined && !scope.sees('task', task) && !scope.sees('service', serviceOfTask(task))) throw missing('task', task);
  if (stack !== undefined && !scope.sees('stack', stack)) throw missing('stack', stack);
}

/** Drops from a swarm read's answer everything about resources the identity may not see. */
export function filterSwarmAnswer(actionId: string, answer: Answer, scope: SwarmReadScope): Answer {
  if (scope.whole) return answer;
  const service = (name: string) => scope.sees('service', name);
  const node = (name: string) => scope.sees('node', name);
  switch (actionId) {
    case 'swarm.cluster_status': {
      const nodes = answer.nodes as Answer;
      const services = answer.services as Answer;
      const notConverged = list<{ name: string }>(services.not_converged).filter((s) => service(s.name));
      const restarting = list<{ name: string }>(services.restarting).filter((s) => service(s.name));
      const down = list<string>(nodes.down).filter(node);
      const draining = list<string>(nodes.draining).filter(node);
      const mentions = (line: string, prefix: string, name: string) => line.startsWith(`${prefix} ${name}:`) || line.startsWith(`${prefix} ${name} `);
      const problems = list<string>(answer.problems).filter(
        (line) =>
          notConverged.some((s) => mentions(line, 'service', s.name)) ||
          restarting.some((s) => mentions(line, 'service', s.name)) ||
          [...down, ...draining].some((n) => mentions(line, 'node', n)),
      );
      const visibleServices = scope.count('service');
      return {
        ...answer,
        health: problems.length === 0 ? 'healthy' : answer.health,
        problems,
        // Counts and capacity would describe what this identity may not see: only its own part is shown.
        nodes: { total: 0, ready: 0, down, draining, managers: 0, reachable_managers: 0 },
        services: { total: visibleServices, converged: Math.max(0, visibleServices - notConverged.length), not_converged: notConverged, restarting },
        rollouts: list<{ service: string }>(answer.rollouts).filter((r) => service(r.service)),
        capacity: {
          total_cpu_cores: 0,
          reserved_cpu_cores: 0,
          total_memory_bytes: 0,
          reserved_memory_bytes: 0,
          max_node_cpu_cores: 0,
          max_node_memory_bytes: 0,
        },
        tasks_by_state: {},
      };
    }
    case 'swarm.topology': {
      const nodes = list<{ id: string; name: string; type: string }>(answer.nodes).filter((n) => scope.sees(n.type, n.id) || scope.sees(n.type, n.name));
      const ids = new Set(nodes.map((n) => n.id));
      return {
        ...answer,
        nodes,
        edges: list<{ from: string; to: string }>(answer.edges).filter((e) => ids.has(e.from) && ids.has(e.to)),
        ...(answer.stranded ? { stranded: list<{ service: string }>(answer.stranded).filter((s) => service(s.service)) } : {}),
      };
    }
    case 'swarm.events': {
      const events = list<{ type: string; id: string; name: string }>(answer.events).filter(
        (e) => scope.sees(e.type, e.id) || scope.sees(e.type, e.name) || (e.type === 'task' && service(serviceOfTask(e.name))),
      );
      return { ...answer, events, count: events.length };
    }
    case 'swarm.logs': {
      const lines = list<{ service: string }>(answer.lines).filter((l) => service(l.service));
      return {
        ...answer,
        lines,
        count: lines.length,
        services: list<string>(answer.services).filter(service),
        errors: list<{ service: string }>(answer.errors).filter((e) => service(e.service)),
      };
    }
    default:
      // Reads naming one resource were checked before they were sent (watch); anything else shows only to who sees it all.
      return answer;
  }
}
