import type { Action } from '../../../shared/catalog/action.ts';
import { extraUrisOf, uriOf } from './domain-resources.ts';
import type { FleetView } from './fleet-view.ts';

/** At most this many links per answer: a find of 200 rows links the first ones. */
const MAX_LINKS = 50;

interface Named {
  type?: unknown;
  id?: unknown;
  name?: unknown;
  host?: unknown;
}

interface ResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  mimeType: string;
}

/**
 * The resource links a find or describe answer carries: each thing it
 * returned, linked to its fleet:// resource (and a service's logs and
 * Compose, a stack's Compose), so a client can offer where to go next. Only
 * things in the identity's view are linked: the answer showed nothing else.
 */
export function resourceLinks(action: Action | undefined, structured: Record<string, unknown>, view: () => FleetView): ResourceLink[] {
  if (action?.id !== 'fleet.find' && action?.id !== 'fleet.describe') return [];
  const named: Named[] = action.id === 'fleet.find' ? (Array.isArray(structured.rows) ? (structured.rows as Named[]) : []) : [structured as Named];
  if (named.length === 0) return [];
  const fleet = view();
  const links: ResourceLink[] = [];
  for (const thing of named.slice(0, MAX_LINKS)) {
    const candidates = fleet.resources.filter((r) => r.row.type === thing.type && (thing.host === undefined || r.row.host === thing.host));
    const resource = candidates.find((r) => r.row.id === thing.id) ?? candidates.find((r) => r.row.name === thing.name);
    if (!resource) continue;
    const uri = uriOf(resource, fleet);
    if (!uri) continue;
    const label = resource.row.host && resource.row.type !== 'host' ? `${resource.row.host}/${resource.row.name}` : resource.row.name;
    links.push({ type: 'resource_link', uri, name: `${resource.row.type} ${label}`, mimeType: 'application/json' });
    if (action.id === 'fleet.describe') {
      for (const extra of extraUrisOf(resource, fleet)) links.push({ type: 'resource_link', uri: extra.uri, name: extra.title, mimeType: extra.mimeType });
    }
  }
  return links;
}
