import { type McpServer, ProtocolError, ProtocolErrorCode, type RegisteredResourceTemplate, ResourceTemplate, UriTemplate } from '@modelcontextprotocol/server';
import { toFleetError } from '../../../shared/errors/fleet-error.ts';
import { BROKER_DOMAINS } from '../../domains/broker-domains.ts';
import { INDEX_READ_HINT, readCacheHint } from '../cache-hints.ts';
import { fleetNames, groupNames, matching } from '../completion/fleet-names.ts';
import type { IconLinks } from '../icons/icon-links.ts';
import { DOMAIN_RESOURCES, domainOfResource, entriesOf, mimeTypeOf, readDomainResource, uriTemplateOf } from './domain-resources.ts';
import { listResources, RESOURCE_TEMPLATES, type ResourceContext, readResource } from './fleet-resources.ts';
import { pageOf } from './resource-page.ts';
import type { ResourceWatch } from './resource-watch.ts';

/** Resources served beside the fleet's own: the MCP Apps widget documents (`ui://`). */
export interface UiResources {
  list(): { uri: string; name: string; title: string; mimeType: string }[];
  read(uri: string): { uri: string; mimeType: string; text: string; _meta: Record<string, unknown> };
}

/** Resources per resources/list page: a fleet of thousands of containers and tasks pages. */
const PAGE_SIZE = 200;

/**
 * A failed read as MCP answers it: not found (-32002) for what the identity
 * may not see and for what does not exist alike; a refused argument as
 * invalid params; anything else an internal error, with the hint. A not
 * found names the URI asked for in its data, as 2026-07-28 (SEP-2164) asks.
 */
function asResourceError(error: unknown, uri: string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const failure = toFleetError(error);
  const text = `${failure.message}${failure.hint ? `. Next: ${failure.hint}` : ''}`;
  if (failure.code === 'not_found') return new ProtocolError(ProtocolErrorCode.ResourceNotFound, `Resource not found: ${text}`, { uri, hint: failure.hint });
  const invalid = failure.code === 'invalid_argument' || failure.code === 'ambiguous';
  return new ProtocolError(invalid ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError, text);
}

const DOMAIN_TEMPLATES = DOMAIN_RESOURCES.map((declaration) => ({ declaration, template: new UriTemplate(uriTemplateOf(declaration)) }));

/** The declaration and variables a URI matches, if a domain template matches it. */
export function matchDomain(uri: string) {
  for (const { declaration, template } of DOMAIN_TEMPLATES) {
    const variables = template.match(uri);
    if (variables) return { declaration, variables: variables as Record<string, string> };
  }
  return undefined;
}

/** Whether an agent answers the resource at each read (logs, events), rather than the fleet index. */
export const isAgentAnswered = (uri: string) => {
  const content = matchDomain(uri)?.declaration.content;
  return typeof content === 'object' && 'action' in content;
};

/** Reads any fleet:// resource as the identity may see it. */
export async function readAny(uri: string, context: ResourceContext): Promise<{ mimeType: string; text: string }> {
  const domain = matchDomain(uri);
  try {
    if (domain) return await readDomainResource(domain.declaration, uri, domain.variables, context);
    return { mimeType: 'application/json', text: JSON.stringify(await readResource(uri, context), null, 2) };
  } catch (error) {
    throw asResourceError(error, uri);
  }
}

/** Whether a domain template is offered to the identity: one that runs an action is hidden where that action is. */
const offersTemplate = (declaration: (typeof DOMAIN_RESOURCES)[number], context: ResourceContext) =>
  typeof declaration.content !== 'object' || !('action' in declaration.content) || context.runner.allows(context.identity, declaration.content.action);

/** Every resource the identity may read, in a stable order: the fleet documents, then each domain template's things. */
export function everyResource(context: ResourceContext) {
  const view = context.view();
  return [
    ...listResources(context),
    ...DOMAIN_RESOURCES.filter((declaration) => offersTemplate(declaration, context)).flatMap((declaration) => entriesOf(declaration, view)),
  ];
}

/** A read's cache hint for a 2026-07-28 client: what the fleet index serves (agent-answered reads are fresh each time). */
const hintOf = (uri: string) => (matchDomain(uri) ? (isAgentAnswered(uri) ? undefined : INDEX_READ_HINT) : readCacheHint(uri));

/**
 * Registers the fleet:// resources on one of a session's servers: the fleet
 * documents, each domain's templates (with completion of their variables),
 * a paged resources/list, and subscriptions kept by the session's watch.
 * Everything is read as the session's identity through its view of the
 * fleet; `cacheHints` adds a read's hint (2026-07-28 answers only). The
 * widget documents hold no fleet data and are listed to every identity.
 * Each domain's templates carry its icon, the fleet's own the product's.
 */
export function registerResources(
  server: McpServer,
  contextOf: (signal: AbortSignal) => ResourceContext,
  watch: ResourceWatch,
  cacheHints: boolean,
  widgets: UiResources,
  icons: IconLinks,
): { template: RegisteredResourceTemplate; domain: string }[] {
  const domainTemplates: { template: RegisteredResourceTemplate; domain: string }[] = [];
  const templates: { name: string; template: RegisteredResourceTemplate }[] = [];
  const now = () => contextOf(new AbortController().signal);
  const read = async (uri: string, signal: AbortSignal) => {
    const { mimeType, text } = await readAny(uri, contextOf(signal));
    return { contents: [{ uri, mimeType, text }], ...(cacheHints ? hintOf(uri) : {}) };
  };
  for (const resource of listResources(now())) {
    const { uri, name, ...metadata } = resource;
    server.registerResource(name, uri, metadata, (url, ctx) => read(url.href, ctx.mcpReq.signal));
  }
  const [actionTemplate, agentTemplate] = RESOURCE_TEMPLATES;
  const offersAgents = listResources(now()).some((resource) => resource.uri === 'fleet://agents');
  for (const [descriptor, complete] of [
    [
      actionTemplate,
      {
        id: (typed: string) =>
          matching(
            now().visibleActions.map((a) => a.id),
            typed,
          ),
      },
    ],
    [agentTemplate, { name: (typed: string) => fleetNames(now().view(), 'host', typed) }],
  ] as const) {
    if (!descriptor || (descriptor === agentTemplate && !offersAgents)) continue;
    const { uriTemplate, name, ...metadata } = descriptor;
    const template = server.registerResource(
      name,
      new ResourceTemplate(uriTemplate, { list: undefined, complete }),
      { ...metadata, ...icons.of(undefined) },
      (url, _variables, ctx) => read(url.href, ctx.mcpReq.signal),
    );
    templates.push({ name, template });
  }
  for (const declaration of DOMAIN_RESOURCES.filter((candidate) => offersTemplate(candidate, now()))) {
    const type = declaration.type;
    const domain = domainOfResource(declaration);
    const grouped = BROKER_DOMAINS.some((broker) => broker.domain.name === domain && broker.groups);
    const complete = {
      // A domain's groups where it has them (its clusters), else the cluster (or reporting host) of its things of the type.
      cluster: (typed: string) => {
        const view = now().view();
        return grouped
          ? groupNames(view, domain, typed)
          : matching(
              view.ofType(type ?? 'host').map((r) => r.row.cluster ?? r.row.host ?? ''),
              typed,
            );
      },
      host: (typed: string) =>
        matching(
          now()
            .view()
            .ofType(type ?? 'host')
            .map((r) => r.row.host ?? ''),
          typed,
        ),
      name: (typed: string, context?: { arguments?: Record<string, string> }) =>
        type ? fleetNames(now().view(), type, typed, { cluster: context?.arguments?.cluster, host: context?.arguments?.host }, declaration.key) : [],
    };
    const template = server.registerResource(
      declaration.name,
      new ResourceTemplate(uriTemplateOf(declaration), { list: undefined, complete }),
      {
        title: declaration.title,
        description: declaration.description,
        mimeType: mimeTypeOf(declaration),
        ...icons.of(domain),
      },
      (url, _variables, ctx) => read(url.href, ctx.mcpReq.signal),
    );
    domainTemplates.push({ template, domain });
    templates.push({ name: declaration.name, template });
  }

  // The templates shown now: a domain's are left out while no agent serves it (the SDK's own list shows disabled ones too).
  server.server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: templates
      .filter(({ template }) => template.enabled)
      .map(({ name, template }) => ({ name, uriTemplate: template.resourceTemplate.uriTemplate.toString(), ...template.metadata })),
  }));

  // resources/list in pages, each resource the identity may read once (the SDK's own list does not page).
  server.server.setRequestHandler('resources/list', async (request, ctx) => {
    const all = [...everyResource(contextOf(ctx.mcpReq.signal)), ...widgets.list()];
    const { items, nextCursor } = pageOf(all, request.params?.cursor, PAGE_SIZE);
    return { resources: items, ...(nextCursor ? { nextCursor } : {}) };
  });

  // resources/read by the same dispatch as everything here, so that a URI no template matches is answered like a hidden one (-32002).
  server.server.setRequestHandler('resources/read', async (request, ctx) => {
    const { uri } = request.params;
    if (!uri.startsWith('ui://')) return read(uri, ctx.mcpReq.signal);
    try {
      return { contents: [widgets.read(uri)] };
    } catch (error) {
      throw asResourceError(error, uri);
    }
  });

  server.server.setRequestHandler('resources/subscribe', async (request, ctx) => {
    await watch.subscribe(request.params.uri, ctx.mcpReq.signal);
    return {};
  });
  server.server.setRequestHandler('resources/unsubscribe', async (request) => {
    watch.unsubscribe(request.params.uri);
    return {};
  });
  return domainTemplates;
}
