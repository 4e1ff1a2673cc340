import type { SwarmSnapshot } from '../../../shared/engine/records.ts';
import { networkRecord, nodeRecord, payloadRecord, serviceRecord, taskRecord, volumeRecord } from '../../engine/engine-records.ts';
import type { EngineJson, SwarmEngine } from './swarm-engine.ts';

/** The snapshot is re-read at most this often; calls in between share it. */
const FRESH_MS = 1000;

/**
 * Reads a manager's whole view of its swarm (services with their status,
 * tasks, nodes, networks, configs, secrets, its own volumes) as compact records.
 */
export class SwarmReader {
  private last: { at: number; value: Promise<SwarmSnapshot> } | undefined;

  constructor(
    private readonly engine: SwarmEngine,
    private readonly clusterName: () => string,
  ) {}

  snapshot(fresh = false): Promise<SwarmSnapshot> {
    if (!fresh && this.last && Date.now() - this.last.at < FRESH_MS) return this.last.value;
    const value = this.read();
    this.last = { at: Date.now(), value };
    value.catch(() => {
      if (this.last?.value === value) this.last = undefined;
    });
    return value;
  }

  /** Forget the cached snapshot (after a change). */
  invalidate(): void {
    this.last = undefined;
  }

  private async read(): Promise<SwarmSnapshot> {
    const [info, services, tasks, nodes, networks, configs, secrets, volumes] = (await Promise.all([
      this.engine.request('GET', '/info'),
      this.engine.request('GET', '/services', { query: { status: true } }),
      this.engine.request('GET', '/tasks'),
      this.engine.request('GET', '/nodes'),
      this.engine.request('GET', '/networks'),
      this.engine.request('GET', '/configs'),
      this.engine.request('GET', '/secrets'),
      this.engine.request('GET', '/volumes'),
    ])) as EngineJson[];
    const serviceRecords = (services as EngineJson[]).map(serviceRecord);
    const names = new Map(serviceRecords.map((s) => [s.id, s.name]));
    return {
      cluster_id: info.Swarm?.Cluster?.ID ?? '',
      cluster_name: this.clusterName(),
      manager_node_id: info.Swarm?.NodeID ?? '',
      taken_unix_ms: Date.now(),
      services: serviceRecords,
      tasks: (tasks as EngineJson[]).map((t) => taskRecord(t, names)),
      nodes: (nodes as EngineJson[]).map(nodeRecord),
      networks: (networks as EngineJson[]).filter((n) => n.Scope === 'swarm').map(networkRecord),
      configs: (configs as EngineJson[]).map((c) => payloadRecord(c, true)),
      secrets: (secrets as EngineJson[]).map((s) => payloadRecord(s, false)),
      volumes: ((volumes?.Volumes ?? []) as EngineJson[]).map(volumeRecord),
    };
  }
}
