import type { PartialView } from '../../catalog/partial-view.ts';
import { FleetError } from '../../errors/fleet-error.ts';

/**
 * What the swarm reads show to an identity that sees only part of a swarm:
 * each keeps what concerns the services, nodes and tasks it sees.
 */

type Answer = Record<string, unknown>;
const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

/** The service a task name (`service.slot` or `service.nodeid`) belongs to. */
const serviceOfTask = (name: string) => (name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : name);

export const clusterStatusView: PartialView = {
  filter(answer, visible) {
    const service = (name: string) => visible.sees('service', name);
    const node = (name: string) => visible.sees('node', name);
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
    const visibleServices = visible.count('service');
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
  },
};

export const topologyView: PartialView = {
  filter(answer, visible) {
    const nodes = list<{ id: string; name: string; type: string }>(answer.nodes).filter((n) => visible.sees(n.type, n.id) || visible.sees(n.type, n.name));
    const ids = new Set(nodes.map((n) => n.id));
    return {
      ...answer,
      nodes,
      edges: list<{ from: string; to: string }>(answer.edges).filter((e) => ids.has(e.from) && ids.has(e.to)),
      ...(answer.stranded ? { stranded: list<{ service: string }>(answer.stranded).filter((s) => visible.sees('service', s.service)) } : {}),
    };
  },
};

export const eventsView: PartialView = {
  filter(answer, visible) {
    const events = list<{ type: string; id: string; name: string }>(answer.events).filter(
      (e) => visible.sees(e.type, e.id) || visible.sees(e.type, e.name) || (e.type === 'task' && visible.sees('service', serviceOfTask(e.name))),
    );
    return { ...answer, events, count: events.length };
  },
};

export const logsView: PartialView = {
  check(params, visible, where) {
    const missing = (kind: string, name: string) =>
      new FleetError('not_found', `no ${kind} "${name}" in swarm ${where}`, { hint: `find with type ${kind} lists the ones you may see.` });
    const { service, task, stack } = params as { service?: string; task?: string; stack?: string };
    if (service !== undefined && !visible.sees('service', service)) throw missing('service', service);
    if (task !== undefined && !visible.sees('task', task) && !visible.sees('service', serviceOfTask(task))) throw missing('task', task);
    if (stack !== undefined && !visible.sees('stack', stack)) throw missing('stack', stack);
  },
  filter(answer, visible) {
    const service = (name: string) => visible.sees('service', name);
    const lines = list<{ service: string }>(answer.lines).filter((l) => service(l.service));
    return {
      ...answer,
      lines,
      count: lines.length,
      services: list<string>(answer.services).filter(service),
      errors: list<{ service: string }>(answer.errors).filter((e) => service(e.service)),
    };
  },
};
