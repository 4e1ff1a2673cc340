import type { ContainerRecord } from '../../../shared/engine/records.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { IndexContext, Indexer } from '../../index/indexer.ts';
import { type Digest, type Resource, type RowFilter, wantsType } from '../../index/resource.ts';

/** Where a sandbox keeps its telemetry unless its label says otherwise. */
const DEFAULT_RUNTIME_DIR = '/run/ephemeral-os';
const CONTAINERS = new Set(['container']);

/**
 * The sandbox domain's index: nothing of its own. A sandbox is a container
 * carrying the sandbox label, so its rows are the engine's containers that
 * name a sandbox id, seen anew: named by that id, ready while running.
 */
export class SandboxIndexer implements Indexer {
  readonly types = ['sandbox'] as const;

  constructor(private readonly context: IndexContext) {}

  rows(filter: RowFilter): Resource[] {
    if (!wantsType(filter, 'sandbox')) return [];
    const sandboxOf = (record: unknown) => (record as ContainerRecord | undefined)?.sandbox_id;
    const containers = this.context.rows({
      types: CONTAINERS,
      match: (_id, _name, host, _recordId, record) => {
        const id = sandboxOf(record);
        return !!id && (!filter.match || filter.match(id, id, host, undefined, record));
      },
    });
    return containers.map((resource) => {
      const container = resource.record as ContainerRecord;
      const id = container.sandbox_id as string;
      return {
        ...resource,
        row: {
          id,
          name: id,
          type: 'sandbox',
          state: container.state === 'running' ? 'ready' : container.state,
          detail: container.name,
          ...(resource.row.host !== undefined ? { host: resource.row.host } : {}),
        },
      };
    });
  }

  digest(resource: Resource): Digest {
    const { row } = resource;
    const container = resource.record as ContainerRecord;
    const host = resource.host as Host;
    return {
      id: row.id,
      name: row.name,
      type: 'sandbox',
      state: row.state ?? container.state,
      since_unix_ms: container.created_unix_ms,
      details: {
        container: container.name,
        image: container.image,
        status: container.status,
        runtime_dir: container.labels['fleetmesh.sandbox.runtime-dir'] ?? DEFAULT_RUNTIME_DIR,
      },
      related: [
        { type: 'container', id: container.id.slice(0, 12), name: container.name, relation: 'runs_in', host: host.name },
        { type: 'host', id: host.id, name: host.name, relation: 'runs_on', host: host.name },
      ],
      recent_failures: [],
      host: host.name,
    };
  }
}
