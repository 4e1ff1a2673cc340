import { isInvoluntaryEnd } from '../../shared/domains/swarm/convergence.ts';
import type { SwarmSnapshot } from '../../shared/domains/swarm/records.ts';
import { swarmDomain } from '../../shared/domains/swarm/swarm-domain.ts';
import type { Host } from '../agents/agent-registry.ts';
import { type Claim, holds, holdsRole } from '../agents/claims.ts';
import type { IndexContext, Indexer } from './indexer.ts';

export interface SwarmEntry {
  snapshot: SwarmSnapshot;
  /** The agent that reported it. */
  reportedBy: string;
  receivedAt: number;
}

const KEEP_FAILURES_MS = 8 * 86_400_000;

/**
 * The swarm domain's index: each swarm's whole state as its managers see it,
 * taken only from an approved or proven manager, and its tasks' involuntary
 * ends kept in the store for restart counts.
 */
export class SwarmIndexer implements Indexer {
  readonly domain = swarmDomain;
  readonly swarms = new Map<string, SwarmEntry>();

  constructor(private readonly context: IndexContext) {}

  take(host: Host, kind: string, payload: unknown, receivedAt: number): void {
    const snapshot = { ...(payload as SwarmSnapshot), taken_unix_ms: receivedAt };
    if (!holdsRole(host, 'swarm-manager', snapshot.cluster_id, this.context.registry.list(), this.context.evidence)) {
      this.context.refuse(host, kind, `is about swarm ${snapshot.cluster_id}, of which this agent is no approved or proven manager`);
      return;
    }
    this.swarms.set(snapshot.cluster_id, { snapshot, reportedBy: host.id, receivedAt });
    const services = new Map(snapshot.services.map((s) => [s.id, s]));
    const db = this.context.store.db;
    const insert = db.prepare('INSERT OR IGNORE INTO task_failures (task_id, cluster_id, service_id, at) VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (const task of snapshot.tasks) {
        const service = services.get(task.service_id);
        if (service && isInvoluntaryEnd(task, service) && task.timestamp_unix_ms > 0)
          insert.run(task.id, snapshot.cluster_id, task.service_id, task.timestamp_unix_ms);
      }
    })();
    this.context.changed('swarm', snapshot.cluster_id);
  }

  /** A revoked agent's snapshots go when its role does (dropLostRoles). */
  forget(): void {}

  /** When a service's tasks ended involuntarily, as far back as the broker has seen (up to 8 days). */
  taskFailures(serviceId: string, sinceUnixMs: number): number[] {
    const rows = this.context.store.db.prepare('SELECT at FROM task_failures WHERE service_id = ? AND at >= ?').all(serviceId, sinceUnixMs) as { at: number }[];
    return rows.map((row) => row.at);
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
    this.context.store.db.prepare('DELETE FROM task_failures WHERE at < ?').run(now - KEEP_FAILURES_MS);
  }
}
