import { describe as describeAction, find as findAction } from '../../../shared/domains/fleet/index-actions.ts';
import { RESOURCE_TYPES, type ResourceType } from '../../../shared/domains/resource-types.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';
import { pluralOf } from '../../../shared/format/plural-of.ts';
import { defineBrokerAction } from '../../calls/broker-action.ts';
import { type Resource, visible } from '../../index/resource.ts';
import { visibleRelated } from '../../index/visible-related.ts';

const typeRank = (resource: Resource) => RESOURCE_TYPES.indexOf(resource.row.type as ResourceType);

function matchesLabel(resource: Resource, label: string): boolean {
  const eq = label.indexOf('=');
  if (eq < 0) return Object.hasOwn(resource.labels, label);
  return resource.labels[label.slice(0, eq)] === label.slice(eq + 1);
}

export const findResourcesHandler = defineBrokerAction({
  action: findAction,
  async run(params, context) {
    const type = params.type === undefined ? undefined : (RESOURCE_TYPES.find((t) => t === params.type || pluralOf(t) === params.type) ?? params.type);
    const query = params.query?.toLowerCase();
    const named = query ? (id: string, name: string) => name.toLowerCase().includes(query) || id.toLowerCase().startsWith(query) : undefined;
    const candidates = context.index
      .rows({ types: type ? new Set([type]) : undefined, match: named })
      .filter((r) => visible(context.identity, r))
      .filter((r) => !params.state || r.row.state?.toLowerCase() === params.state.toLowerCase())
      .filter((r) => !params.stack || r.row.stack === params.stack)
      .filter((r) => !params.node || r.node?.toLowerCase() === params.node.toLowerCase())
      .filter((r) => !params.image || (r.image ?? '').includes(params.image))
      .filter((r) => !params.label || matchesLabel(r, params.label));
    const order = (a: Resource, b: Resource) =>
      typeRank(a) - typeRank(b) || a.row.name.localeCompare(b.row.name) || (a.row.host ?? '').localeCompare(b.row.host ?? '');
    candidates.sort(order);
    if (type) {
      const offset = params.offset ?? 0;
      const page = candidates.slice(offset, offset + (params.limit ?? 200));
      return { rows: page.map((r) => r.row), total: candidates.length, ...(params.raw ? { raw: page.map((r) => r.record) } : {}) };
    }
    const counts: Record<string, number> = {};
    const rows = [];
    for (const resource of candidates) {
      counts[resource.row.type] = (counts[resource.row.type] ?? 0) + 1;
      if ((counts[resource.row.type] ?? 0) <= (params.limit ?? 3)) rows.push(resource.row);
    }
    return { rows, total: candidates.length, counts };
  },
});

export const describeResourceHandler = defineBrokerAction({
  action: describeAction,
  async run(params, context) {
    const types = new Set([params.type]);
    const wanted = params.id;
    const lower = wanted.toLowerCase();
    // host/name names a container or volume on one host.
    const slash = wanted.indexOf('/');
    const [onHost, nameOnHost] = slash > 0 ? [wanted.slice(0, slash), wanted.slice(slash + 1)] : [];
    // The ways an id names a resource, in order of preference.
    const byId = (id: string, recordId: string | undefined) => id === wanted || (wanted.length >= 6 && id.startsWith(wanted)) || recordId === wanted;
    const byName = (name: string) => name === wanted || name.toLowerCase() === lower;
    const onItsHost = (host: string | undefined, name: string) => onHost !== undefined && host === onHost && name === nameOnHost;
    // Only the rows the id could name in any of those ways are built.
    const ofType = context.index
      .rows({ types, match: (id, name, host, recordId) => byId(id, recordId) || byName(name) || onItsHost(host, name) })
      .filter((r) => visible(context.identity, r));
    let matches = ofType.filter((r) => byId(r.row.id, (r.record as { id?: string }).id));
    if (matches.length === 0) matches = ofType.filter((r) => byName(r.row.name));
    if (matches.length === 0) matches = ofType.filter((r) => onItsHost(r.row.host, r.row.name));
    if (matches.length === 0) {
      const closest = closestNames(
        wanted,
        context.index
          .rows({ types })
          .filter((r) => visible(context.identity, r))
          .map((r) => r.row.name),
      );
      throw new FleetError('not_found', `no ${params.type} "${wanted}" in the fleet`, {
        hint: closest.length ? `Closest: ${closest.join(', ')}. find with type ${params.type} lists them.` : `find with type ${params.type} lists them.`,
        details: { closest },
      });
    }
    if (matches.length > 1) {
      const ids = matches.map((r) => (r.row.host ? `${r.row.host}/${r.row.name} (${r.row.id})` : `${r.row.id}${r.row.cluster ? ` in ${r.row.cluster}` : ''}`));
      throw new FleetError('ambiguous', `"${wanted}" names ${matches.length} ${pluralOf(params.type)}`, {
        hint: `Give one of: ${ids.join(', ')}.`,
        details: { ids: matches.map((r) => r.row.id) },
      });
    }
    const resource = matches[0] as Resource;
    const digest = visibleRelated(context.identity, context.index.digest(resource));
    return { ...digest, ...(params.raw ? { raw: resource.record } : {}) };
  },
});
