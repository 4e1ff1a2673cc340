import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { BROKER_DOMAINS } from '../../domains/broker-domains.ts';
import type { DomainResource, ResourceTarget } from '../../domains/domain-resource.ts';
import type { Resource } from '../../index/resource.ts';
import { visibleRelated } from '../../index/visible-related.ts';
import { type ResourceContext, resourceNotFound } from './fleet-resources.ts';
import type { FleetView } from './fleet-view.ts';

/** Every resource template the domains' broker halves declare, in domain order. */
export const DOMAIN_RESOURCES: readonly DomainResource[] = BROKER_DOMAINS.flatMap((broker) => broker.resources ?? []);

/** The name of the domain that declares a resource template. */
export const domainOfResource = (declaration: DomainResource): string =>
  BROKER_DOMAINS.find((broker) => broker.resources?.includes(declaration))?.domain.name ?? '';

export const uriTemplateOf = (declaration: DomainResource) => `fleet://${declaration.template}`;

const variablesOf = (declaration: DomainResource) => [...declaration.template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);

const fill = (declaration: DomainResource, values: Record<string, string>) =>
  `fleet://${declaration.template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? ''))}`;

/** A URI variable as written: percent-decoded when it decodes, else as it is (it then names nothing). */
function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The variables of a thing's URI: its group or cluster (else the host that reported it), its host, its key. */
function valuesOf(declaration: DomainResource, resource: Resource, view: FleetView): Record<string, string> {
  const { row } = resource;
  return {
    cluster: resource.group ? view.groupKey(domainOfResource(declaration), resource.group) : (row.cluster ?? row.host ?? ''),
    host: row.host ?? '',
    name: declaration.key === 'id' ? row.id : row.name,
  };
}

/** One concrete resource of a template, as resources/list shows it. */
export interface ResourceEntry {
  uri: string;
  name: string;
  title: string;
  mimeType: string;
}

export const mimeTypeOf = ({ content }: DomainResource) => (typeof content === 'object' && 'mimeType' in content ? content.mimeType : 'application/json');

/** The concrete resources of one template this view shows. */
export function entriesOf(declaration: DomainResource, view: FleetView): ResourceEntry[] {
  const mimeType = mimeTypeOf(declaration);
  if (!declaration.type) {
    return view.groupsOf(domainOfResource(declaration)).map((group) => ({
      uri: fill(declaration, { cluster: group.key }),
      name: `${declaration.name}:${group.key}`,
      title: `${declaration.title} ${group.key}`,
      mimeType,
    }));
  }
  return view.ofType(declaration.type).map((resource) => {
    const values = valuesOf(declaration, resource, view);
    const label = [values.cluster && variablesOf(declaration).includes('cluster') ? values.cluster : undefined, resource.row.host, resource.row.name]
      .filter(Boolean)
      .join('/');
    return { uri: fill(declaration, values), name: `${declaration.name}:${label}`, title: `${declaration.title} ${label}`, mimeType };
  });
}

/** The URI of a thing's own resource (its digest), when a domain offers one for its type. */
export function uriOf(resource: Resource, view: FleetView): string | undefined {
  const declaration = DOMAIN_RESOURCES.find((d) => d.type === resource.row.type && d.content === 'digest');
  return declaration ? fill(declaration, valuesOf(declaration, resource, view)) : undefined;
}

/** The URIs a service or stack also has beside its digest (logs, compose). */
export function extraUrisOf(resource: Resource, view: FleetView): { uri: string; title: string; mimeType: string }[] {
  return DOMAIN_RESOURCES.filter((d) => d.type === resource.row.type && d.content !== 'digest').map((d) => ({
    uri: fill(d, valuesOf(d, resource, view)),
    title: `${d.title} ${resource.row.name}`,
    mimeType: mimeTypeOf(d),
  }));
}

/** The thing a URI's variables name, among what the view shows: by key, name, id or id prefix; in the group or on the host it names. */
function resolve(declaration: DomainResource, uri: string, variables: Record<string, string>, view: FleetView): Resource {
  const wanted = Object.fromEntries(Object.entries(variables).map(([key, value]) => [key, decoded(value)]));
  const candidates = view.ofType(declaration.type as string).filter((resource) => {
    const { row } = resource;
    if (wanted.cluster !== undefined) {
      if (resource.group ? view.group(domainOfResource(declaration), wanted.cluster)?.id !== resource.group : (row.cluster ?? row.host) !== wanted.cluster)
        return false;
    }
    if (wanted.host !== undefined && row.host !== wanted.host) return false;
    // A host's own resource names it by {host}.
    const name = wanted.name ?? wanted.host ?? '';
    return row.id === name || row.name === name || (name.length >= 6 && row.id.startsWith(name));
  });
  const key = wanted.name ?? wanted.host;
  const exact = candidates.filter((r) => r.row.id === key || (declaration.key !== 'id' && r.row.name === key));
  const chosen = exact.length === 1 ? exact : candidates;
  if (chosen.length === 1) return chosen[0] as Resource;
  if (chosen.length > 1) {
    throw new FleetError('ambiguous', `${uri} names ${chosen.length} ${declaration.type}s`, {
      hint: `Read one of ${chosen.map((r) => fill(declaration, { ...valuesOf(declaration, r, view), name: r.row.id })).join(', ')}.`,
    });
  }
  throw resourceNotFound(
    uri,
    entriesOf(declaration, view).map((e) => e.uri),
  );
}

/**
 * Reads one resource of a domain template as the identity may see it: from
 * the index (the digest, or the domain's document), or by running the
 * declared action through the runner as a tool call runs (levels, grants,
 * audit).
 */
export async function readDomainResource(
  declaration: DomainResource,
  uri: string,
  variables: Record<string, string>,
  context: ResourceContext,
): Promise<{ mimeType: string; text: string }> {
  const view = context.view();
  const { content } = declaration;
  let target: ResourceTarget;
  let resource: Resource | undefined;
  if (declaration.type) {
    resource = resolve(declaration, uri, variables, view);
    target = { id: resource.row.id, name: resource.row.name, ...(resource.group ? { group: resource.group } : {}) };
  } else {
    const group = view.group(domainOfResource(declaration), decoded(variables.cluster ?? ''));
    if (!group)
      throw resourceNotFound(
        uri,
        entriesOf(declaration, view).map((e) => e.uri),
      );
    target = { group: group.id };
  }
  if (content === 'digest' && resource) {
    const digest = visibleRelated(context.identity, view.index.digest(resource));
    return { mimeType: 'application/json', text: JSON.stringify(digest, null, 2) };
  }
  if (typeof content === 'object' && 'read' in content && resource) return { mimeType: content.mimeType, text: content.read(resource, view) };
  if (typeof content === 'object' && 'action' in content) {
    // A refusal or failure is the runner's FleetError, answered as the read's error (register-resources.ts).
    const result = await context.runner.run(context.identity, content.action, content.args(target), { tool: content.action.tool, signal: context.signal });
    return { mimeType: 'application/json', text: JSON.stringify(result.structured, null, 2) };
  }
  throw new FleetError('internal', `${uri} has no content`);
}
