import type { Host } from '../agents/agent-registry.ts';
import type { Digest, Related, Resource, RowFilter } from './resource.ts';
import { wantsType } from './resource.ts';

/** Every host as a resource of the fleet's own type: what the registry knows of its agent. */
export function hostRows(hosts: readonly Host[], filter: RowFilter): Resource[] {
  if (!wantsType(filter, 'host')) return [];
  const rows: Resource[] = [];
  for (const host of hosts) {
    if (filter.match && !filter.match(host.id, host.name, host.name, host.id, host)) continue;
    rows.push({
      row: {
        id: host.id,
        name: host.name,
        type: 'host',
        state: host.state,
        detail: [host.hello?.facts.os, host.version && `fleetmesh ${host.version}`].filter(Boolean).join(', ') || undefined,
        host: host.name,
      },
      record: {
        name: host.name,
        id: host.id,
        state: host.state,
        labels: host.labels,
        version: host.version,
        facts: host.hello?.facts ?? {},
        collectors: host.hello?.collectors ?? [],
      },
      labels: host.labels,
      node: host.name,
      host,
    });
  }
  return rows;
}

/** A host's digest: its agent's state, facts and latest sample; `related` is what the domains relate to it (its containers, its node in a cluster). */
export function hostDigest(host: Host, related: Related[]): Digest {
  return {
    id: host.id,
    name: host.name,
    type: 'host',
    state: host.state,
    since_unix_ms: host.stateSince,
    details: {
      version: host.version,
      labels: host.labels,
      collectors: host.hello?.collectors ?? [],
      facts: host.hello?.facts ?? {},
      sample: host.sample,
      last_seen_unix_ms: host.lastSeenAt,
    },
    related,
    recent_failures: [],
    host: host.name,
  };
}
