import type { ResourceType } from '../../../shared/domains/resource-types.ts';
import type { FleetView } from '../resources/fleet-view.ts';

/** Narrows names to one group (a cluster) or one host, from arguments the client already filled in. */
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
 * The names of a type an argument may take, from the fleet index as the
 * identity sees it (the view is already filtered by `visible`, the rule every
 * read uses): a hidden host, service or guest is never offered. `key: 'id'`
 * offers ids where names repeat (tasks, guests' VMIDs).
 */
export function fleetNames(view: FleetView, type: ResourceType, typed: string, within: Within = {}, key: 'name' | 'id' = 'name'): string[] {
  const groups = within.cluster ? view.groupIds(within.cluster) : undefined;
  const names = view
    .ofType(type)
    .filter((r) => !within.cluster || (r.group ? groups?.has(r.group) : (r.row.cluster ?? r.row.host) === within.cluster))
    .filter((r) => !within.host || r.row.host === within.host)
    .map((r) => (key === 'id' ? r.row.id : r.row.name));
  return matching(names, typed);
}

/** The keys of a domain's groups (its clusters) the identity sees, as its URIs name them. */
export function groupNames(view: FleetView, domain: string, typed: string): string[] {
  return matching(
    view.groupsOf(domain).map((group) => group.key),
    typed,
  );
}
