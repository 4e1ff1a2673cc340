import type { Action } from '../../../shared/catalog/action.ts';
import type { ResourceMatch } from '../../index/resource.ts';
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
 * The resource links an answer naming things of the index carries (the
 * action's `indexLinks`: find, describe): each thing it returned, linked to its
 * fleet:// resource (and a service's logs and Compose, a stack's Compose), so a
 * client can offer where to go next. Only things in the identity's view are
 * linked: the answer showed nothing else.
 */
export function resourceLinks(
  action: Action | undefined,
  structured: Record<string, unknown>,
  /** The fleet as the caller sees it, built with only the resources the links may name. */
  view: (types: ReadonlySet<string>, match: ResourceMatch) => FleetView,
): ResourceLink[] {
  const links = action?.indexLinks;
  if (!links) return [];
  const listed = links.list === undefined ? [structured] : structured[links.list];
  const named: Named[] = Array.isArray(listed) ? (listed as Named[]).slice(0, MAX_LINKS) : [];
  if (named.length === 0) return [];
  const ids = new Set(named.map((thing) => thing.id));
  const names = new Set(named.map((thing) => thing.name));
  const fleet = view(new Set(named.map((thing) => String(thing.type))), (id, name) => ids.has(id) || names.has(name));
  const found: ResourceLink[] = [];
  for (const thing of named) {
    const candidates = fleet.resources.filter((r) => r.row.type === thing.type && (thing.host === undefined || r.row.host === thing.host));
    const resource = candidates.find((r) => r.row.id === thing.id) ?? candidates.find((r) => r.row.name === thing.name);
    if (!resource) continue;
    const uri = uriOf(resource, fleet);
    if (!uri) continue;
    const label = resource.row.host && resource.row.type !== 'host' ? `${resource.row.host}/${resource.row.name}` : resource.row.name;
    found.push({ type: 'resource_link', uri, name: `${resource.row.type} ${label}`, mimeType: 'application/json' });
    if (links.more) {
      for (const extra of extraUrisOf(resource, fleet)) found.push({ type: 'resource_link', uri: extra.uri, name: extra.title, mimeType: extra.mimeType });
    }
  }
  return found;
}
