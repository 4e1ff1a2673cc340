import type { FleetView } from '../resources/fleet-view.ts';

/** What a completed argument names: a type of the fleet index, a swarm, or an action. */
export type NameKind =
  | 'host'
  | 'container'
  | 'sandbox'
  | 'service'
  | 'task'
  | 'node'
  | 'stack'
  | 'config'
  | 'secret'
  | 'network'
  | 'volume'
  | 'guest'
  | 'cluster';

/** Narrows names to one swarm or one host, from arguments the client already filled in. */
interface Within {
  cluster?: string | undefined;
  host?: string | undefined;
}

/** Case-insensitive substring match, sorted and each once: typing `prom` offers `monitoring_prometheus`. */
export function matching(candidates: Iterable<string>, typed: string): string[] {
  const needle = typed.toLowerCase();
  return [...new Set(candidates)].filter((name) => name.toLowerCase().includes(needle)).sort();
}

/**
 * The names an argument may take, from the fleet index as the identity sees
 * it (the view is already filtered by `visible`, the rule every read uses):
 * a hidden host, service or guest is never offered. `key: 'id'` offers ids
 * where names repeat (tasks, guests' VMIDs).
 */
export function fleetNames(view: FleetView, kind: NameKind, typed: string, within: Within = {}, key: 'name' | 'id' = 'name'): string[] {
  if (kind === 'cluster')
    return matching(
      view.swarms.map((s) => s.key),
      typed,
    );
  const swarm = within.cluster ? view.swarm(within.cluster) : undefined;
  const names = view
    .ofType(kind)
    .filter((r) => !within.cluster || (r.group ? r.group === swarm?.id : (r.row.cluster ?? r.row.host) === within.cluster))
    .filter((r) => !within.host || r.row.host === within.host)
    .map((r) => (key === 'id' ? r.row.id : r.row.name));
  return matching(names, typed);
}
