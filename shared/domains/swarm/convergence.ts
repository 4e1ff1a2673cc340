import type { ServiceRecord, TaskRecord } from '../../engine/records.ts';

/** Update states during which a service is moving, not settled. */
const MOVING = new Set(['updating', 'rollback_started']);
const STUCK = new Set(['paused', 'rollback_paused']);
/** Task states that end a task against the orchestrator's wish. */
const INVOLUNTARY = new Set(['failed', 'rejected', 'orphaned', 'complete']);

interface ServiceProgress {
  running: number;
  desired: number;
  converged: boolean;
  /** running, degraded, failing, stopped, updating, rolling_back, paused, or complete for finished jobs. */
  state: string;
  reason: string | undefined;
}

/**
 * The one convergence rule, shared by cluster status, watch, describe and every
 * mutation that waits: a service has converged when every replica it wants is
 * running the current spec and no rollout is in flight.
 */
export function serviceProgress(service: ServiceRecord, tasks: readonly TaskRecord[]): ServiceProgress {
  const own = tasks.filter((t) => t.service_id === service.id);
  const wanted = own.filter((t) => t.desired_state === 'running' || t.desired_state === 'ready');
  const running = wanted.filter((t) => t.state === 'running').length;
  const jobs = service.mode.endsWith('-job');
  const desired = service.mode === 'replicated' ? (service.replicas ?? 0) : (service.desired_tasks ?? wanted.length);
  const update = service.update_status?.state ?? '';
  const failing = wanted.filter((t) => t.state !== 'running').sort((a, b) => b.timestamp_unix_ms - a.timestamp_unix_ms)[0];
  const reason = failing ? failing.error || failing.message || `a task is ${failing.state}` : undefined;
  if (jobs) {
    const done = own.filter((t) => t.state === 'complete').length;
    return { running, desired, converged: running === 0 && done > 0, state: running > 0 ? 'running' : 'complete', reason };
  }
  if (MOVING.has(update)) {
    return { running, desired, converged: false, state: update === 'updating' ? 'updating' : 'rolling_back', reason: service.update_status?.message || reason };
  }
  if (STUCK.has(update)) return { running, desired, converged: false, state: 'paused', reason: service.update_status?.message || reason };
  if (desired === 0) return { running, desired, converged: running === 0, state: 'stopped', reason: undefined };
  const converged = running === desired && wanted.every((t) => t.state === 'running');
  const state = running >= desired ? 'running' : running === 0 ? 'failing' : 'degraded';
  return { running, desired, converged, state, reason: converged ? undefined : reason };
}

/** A task whose end nobody asked for (a crash, a rejection, an exit of a long-running service). */
export function isInvoluntaryEnd(task: TaskRecord, service: ServiceRecord): boolean {
  if (!INVOLUNTARY.has(task.state)) return false;
  // A job that completes has done its work.
  return !(task.state === 'complete' && service.mode.endsWith('-job'));
}

/** Involuntary terminations in the last hour and week, from the tasks Swarm still remembers. */
export function restartCounts(
  service: ServiceRecord,
  tasks: readonly TaskRecord[],
  now = Date.now(),
  extra: readonly number[] = [],
): { last_hour: number; last_week: number } {
  const ends = tasks.filter((t) => t.service_id === service.id && isInvoluntaryEnd(t, service)).map((t) => t.timestamp_unix_ms);
  const all = [...new Set([...ends, ...extra])];
  return { last_hour: all.filter((at) => now - at <= 3_600_000).length, last_week: all.filter((at) => now - at <= 7 * 86_400_000).length };
}

/** The task failures behind a failing state, newest first, at most 5 (Cetacean's recentFailures). */
export function recentFailures(service: ServiceRecord, tasks: readonly TaskRecord[], nodeName: (id: string) => string) {
  return tasks
    .filter((t) => t.service_id === service.id && isInvoluntaryEnd(t, service))
    .sort((a, b) => b.timestamp_unix_ms - a.timestamp_unix_ms)
    .slice(0, 5)
    .map((t) => ({
      task: t.name,
      task_id: t.id,
      node: nodeName(t.node_id),
      state: t.state,
      error: t.error || t.message,
      exit_code: t.exit_code,
      timestamp_unix_ms: t.timestamp_unix_ms,
    }));
}
