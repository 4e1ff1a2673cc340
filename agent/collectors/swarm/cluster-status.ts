import { restartCounts, serviceProgress } from '../../../shared/domains/swarm/convergence.ts';
import type { SwarmSnapshot } from '../../../shared/engine/records.ts';

/** A service restarting at least this often in the last hour is in a loop. */
const LOOP_RESTARTS_PER_HOUR = 3;

/** get_cluster_status from one snapshot: what is wrong, worst first. */
export function clusterStatus(snapshot: SwarmSnapshot, now = Date.now()) {
  const down = snapshot.nodes.filter((n) => n.state !== 'ready').map((n) => n.hostname);
  const draining = snapshot.nodes.filter((n) => n.availability === 'drain').map((n) => n.hostname);
  const managers = snapshot.nodes.filter((n) => n.role === 'manager');
  const reachable = managers.filter((n) => n.reachability === 'reachable' || n.leader).length;
  const progress = snapshot.services.map((service) => ({
    service,
    progress: serviceProgress(service, snapshot.tasks),
    restarts: restartCounts(service, snapshot.tasks, now),
  }));
  const notConverged = progress
    .filter((p) => !p.progress.converged && p.progress.state !== 'complete')
    .map((p) => ({
      name: p.service.name,
      running: p.progress.running,
      desired: p.progress.desired,
      state: p.progress.state,
      ...(p.progress.reason ? { reason: p.progress.reason } : {}),
    }));
  const restarting = progress
    .filter((p) => p.restarts.last_hour >= LOOP_RESTARTS_PER_HOUR)
    .map((p) => ({ name: p.service.name, restarts_last_hour: p.restarts.last_hour }));
  const rollouts = snapshot.services
    .filter((s) => s.update_status && ['updating', 'rollback_started', 'paused', 'rollback_paused'].includes(s.update_status.state))
    .map((s) => ({ service: s.name, state: s.update_status?.state ?? '', message: s.update_status?.message ?? '' }));
  const live = snapshot.nodes.filter((n) => n.state === 'ready');
  const wanted = snapshot.tasks.filter((t) => t.desired_state === 'running');
  const byService = new Map(snapshot.services.map((s) => [s.id, s]));
  let reservedCpu = 0;
  let reservedMemory = 0;
  for (const task of wanted) {
    const service = byService.get(task.service_id);
    reservedCpu += service?.resources.cpu_reservation_cores ?? 0;
    reservedMemory += service?.resources.memory_reservation_bytes ?? 0;
  }
  const tasksByState: Record<string, number> = {};
  for (const task of snapshot.tasks.filter((t) => t.desired_state === 'running')) tasksByState[task.state] = (tasksByState[task.state] ?? 0) + 1;

  const problems: string[] = [];
  for (const name of down) problems.push(`node ${name} is down`);
  if (managers.length && reachable <= managers.length / 2)
    problems.push(`only ${reachable} of ${managers.length} managers are reachable: the swarm has lost quorum`);
  for (const service of notConverged) {
    problems.push(`service ${service.name}: ${service.running}/${service.desired} running (${service.state})${service.reason ? `: ${service.reason}` : ''}`);
  }
  for (const service of restarting) problems.push(`service ${service.name} restarted ${service.restarts_last_hour} times in the last hour`);
  for (const name of draining) problems.push(`node ${name} is draining`);
  for (const rollout of rollouts) problems.push(`service ${rollout.service}: rollout ${rollout.state}${rollout.message ? ` (${rollout.message})` : ''}`);
  const unhealthy = down.length > 0 || notConverged.some((s) => s.running === 0) || (managers.length > 0 && reachable <= managers.length / 2);
  return {
    health: unhealthy ? ('unhealthy' as const) : problems.length ? ('degraded' as const) : ('healthy' as const),
    problems,
    nodes: { total: snapshot.nodes.length, ready: live.length, down, draining, managers: managers.length, reachable_managers: reachable },
    services: { total: snapshot.services.length, converged: progress.filter((p) => p.progress.converged).length, not_converged: notConverged, restarting },
    rollouts,
    capacity: {
      total_cpu_cores: live.reduce((sum, n) => sum + n.cpu_cores, 0),
      reserved_cpu_cores: Math.round(reservedCpu * 1000) / 1000,
      total_memory_bytes: live.reduce((sum, n) => sum + n.memory_bytes, 0),
      reserved_memory_bytes: reservedMemory,
      max_node_cpu_cores: Math.max(0, ...live.map((n) => n.cpu_cores)),
      max_node_memory_bytes: Math.max(0, ...live.map((n) => n.memory_bytes)),
    },
    tasks_by_state: tasksByState,
  };
}
