import { isInvoluntaryEnd } from '../../../shared/domains/swarm/convergence.ts';
import type { ContainerRecord, SwarmSnapshot } from '../../../shared/engine/records.ts';
import type { Host } from '../../agents/agent-registry.ts';
import { type Claim, holds, holdsRole } from '../../agents/claims.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import type { Digest, Related, Resource, RowFilter } from '../../index/resource.ts';
import type { TaskFailure } from '../../store/task-failures-table.ts';
import { swarmDigest } from './swarm-digests.ts';
import { swarmRows } from './swarm-rows.ts';

export interface SwarmEntry {
  snapshot: SwarmSnapshot;
  /** The agent that reported it. */
  reportedBy: string;
  receivedAt: number;
}

const KEEP_FAILURES_MS = 8 * 86_400_000;

/**
 * The swarm domain's index: each swarm's whole state as its managers see it,
 * taken only from an approved manager, and its tasks' involuntary
 * ends kept in the store for restart counts (and in memory, read from the
 * store at start, so digests never wait for the store).
 */
export class SwarmIndexer implements Indexer {
  readonly types = ['service', 'task', 'node', 'stack', 'config', 'secret', 'network'] as const;
  private readonly swarms = new Map<string, SwarmEntry>();
  /** Involuntary task ends by service id, then task id. */
  private readonly failures = new Map<string, Map<string, number>>();

  constructor(private readonly context: IndexContext) {
    void context.store.taskFailures.since(Date.now() - KEEP_FAILURES_MS).then(
      (stored) => {
        for (const failure of stored) this.remember(failure.serviceId, failure.taskId, failure.at);
      },
      // A store that does not answer at start: counts start from what agents report from now on.
      () => {},
    );
  }

  take(host: Host, kind: string, payload: unknown, receivedAt: number): void {
    const snapshot = { ...(payload as SwarmSnapshot), taken_unix_ms: receivedAt };
    if (!holdsRole(host, 'swarm-manager', snapshot.cluster_id, this.context.registry.list(), this.context.evidence)) {
      this.context.refuse(host, kind, `is about swarm ${snapshot.cluster_id}, of which this agent is no approved manager`);
      return;
    }
    this.swarms.set(snapshot.cluster_id, { snapshot, reportedBy: host.id, receivedAt });
    const services = new Map(snapshot.services.map((s) => [s.id, s]));
    const fresh: TaskFailure[] = [];
    for (const task of snapshot.tasks) {
      const service = services.get(task.service_id);
      if (service && isInvoluntaryEnd(task, service) && task.timestamp_unix_ms > 0 && this.remember(task.service_id, task.id, task.timestamp_unix_ms)) {
        fresh.push({ taskId: task.id, clusterId: snapshot.cluster_id, serviceId: task.service_id, at: task.timestamp_unix_ms });
      }
    }
    // Best effort: the counts in memory stand for this run when the store does not take them.
    void this.context.store.taskFailures.record(fresh).catch(() => {});
    this.context.changed('swarm', snapshot.cluster_id);
  }

  /** A revoked agent's snapshots go when its role does (dropLostRoles). */
  forget(): void {}

  /** Every swarm's last snapshot, as its managers reported it. */
  swarmEntries(): SwarmEntry[] {
    return [...this.swarms.values()];
  }

  swarm(clusterId: string): SwarmEntry | undefined {
    return this.swarms.get(clusterId);
  }

  /** Every resource of one swarm, for what one identity may read of it. */
  resourcesOf(clusterId: string): Resource[] {
    const entry = this.swarms.get(clusterId);
    return entry ? swarmRows(entry.snapshot, {}) : [];
  }

  rows(filter: RowFilter): Resource[] {
    return [...this.swarms.values()].flatMap(({ snapshot }) => swarmRows(snapshot, filter));
  }

  digest(resource: Resource, hosts: readonly Host[], now: number): Digest {
    const snapshot = this.swarms.get(resource.group ?? '')?.snapshot as SwarmSnapshot;
    return swarmDigest(resource, snapshot, hosts, (serviceId, since) => this.taskFailures(serviceId, since), now);
  }

  /** A host is a swarm node when its engine says so; a container is a task of a service when its labels say so. */
  related(resource: Resource): Related[] {
    if (resource.row.type === 'host') {
      const host = resource.host as Host;
      const nodeId = host.hello?.facts.swarm_node_id;
      return typeof nodeId === 'string' && nodeId
        ? [{ type: 'node', id: nodeId, name: String(host.hello?.facts.hostname ?? nodeId), relation: 'swarm node' }]
        : [];
    }
    if (resource.row.type !== 'container') return [];
    const container = resource.record as ContainerRecord;
    return [
      ...(container.service_name ? [{ type: 'service', id: container.service_name, name: container.service_name, relation: 'task_of' }] : []),
      ...(container.task_id
        ? [{ type: 'task', id: container.task_id, name: container.task_name?.replace(/\.[a-z0-9]{25}$/, '') ?? container.task_id, relation: 'task' }]
        : []),
    ];
  }

  /** When a service's tasks ended involuntarily, as far back as the broker has seen (up to 8 days). */
  taskFailures(serviceId: string, sinceUnixMs: number): number[] {
    return [...(this.failures.get(serviceId)?.values() ?? [])].filter((at) => at >= sinceUnixMs).sort((a, b) => a - b);
  }

  /** Adds a task end not known yet; false when it was. */
  private remember(serviceId: string, taskId: string, at: number): boolean {
    let tasks = this.failures.get(serviceId);
    if (!tasks) {
      tasks = new Map();
      this.failures.set(serviceId, tasks);
    }
    if (tasks.has(taskId)) return false;
    tasks.set(taskId, at);
    return true;
  }

  dropLostRoles(claims: ReadonlyMap<string, Claim[]>): void {
    for (const [clusterId, entry] of this.swarms) {
      if (!holds(claims, entry.reportedBy, 'swarm-manager', clusterId)) {
        this.swarms.delete(clusterId);
        this.context.changed('swarm', clusterId);
      }
    }
  }

  prune(now: number): void {
    const before = now - KEEP_FAILURES_MS;
    for (const [serviceId, tasks] of this.failures) {
      for (const [taskId, at] of tasks) if (at < before) tasks.delete(taskId);
      if (tasks.size === 0) this.failures.delete(serviceId);
    }
    void this.context.store.taskFailures.prune(before).catch(() => {});
  }
}
