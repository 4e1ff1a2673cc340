import { createHash } from 'node:crypto';
import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { toFleetError } from '../../../shared/errors/fleet-error.ts';
import { fleetNames, matching } from '../completion/fleet-names.ts';
import { DOMAIN_RESOURCES, entriesOf, readDomainResource, uriTemplateOf } from './domain-resources.ts';
import { listResources, RESOURCE_TEMPLATES, type ResourceContext, readResource } from './fleet-resources.ts';
import { pageOf } from './resource-page.ts';
import { ResourceSubscriptions } from './resource-subscriptions.ts';

/** Resources per resources/list page: a fleet of thousands of containers and tasks pages. */
const PAGE_SIZE = 200;

/**
 * A failed read as MCP answers it: not found (-32002) for what the identity
 * may not see and for what does not exist alike; a refused argument as
 * invalid params; anything else an internal error, with the hint.
 */
function asResourceError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  const failure = toFleetError(error);
  const text = `${failure.message}${failure.hint ? `. Next: ${failure.hint}` : ''}`;
  if (failure.code === 'not_found') return new McpError(-32002, `Resource not found: ${text}`, { hint: failure.hint });
  const invalid = failure.code === 'invalid_argument' || failure.code === 'ambiguous';
  return new McpError(invalid ? ErrorCode.InvalidParams : ErrorCode.InternalError, text);
}

const DOMAIN_TEMPLATES = DOMAIN_RESOURCES.map((declaration) => ({ declaration, template: new UriTemplate(uriTemplateOf(declaration)) }));

/** The declaration and variables a URI matches, if a domain template matches it. */
function matchDomain(uri: string) {
  for (const { declaration, template } of DOMAIN_TEMPLATES) {
    const variables = template.match(uri);
    if (variables) return { declaration, variables: variables as Record<string, string> };
  }
  return undefined;
}

/** Reads any fleet:// resource as the identity may see it. */
async function readAny(uri: string, context: ResourceContext): Promise<{ mimeType: string; text: string }> {
  const domain = matchDomain(uri);
  try {
    if (domain) return await readDomainResource(domain.declaration, uri, domain.variables, context);
    return { mimeType: 'application/json', text: JSON.stringify(await readResource(uri, context), null, 2) };
  } catch (error) {
    throw asResourceError(error);
  }
}

/** Every resource the identity may read, in a stable order: the fleet documents, then each domain template's things. */
function everyResource(context: ResourceContext) {
  const view = context.view();
  return [...listResources(context), ...DOMAIN_RESOURCES.flatMap((declaration) => entriesOf(declaration, view))];
}

/**
 * Registers the fleet:// resources on a session's server: the fleet
 * documents, each domain's templates (with completion of their variables),
 * a paged resources/list, and subscriptions. Everything is read as the
 * session's identity through its view of the fleet; the answer tells the
 * session what to call when the fleet changes.
 */
export function registerResources(server: McpServer, contextOf: (signal: AbortSignal) => ResourceContext): (what: string, key: string) => void {
  const now = () => contextOf(new AbortController().signal);
  const read = async (uri: string, signal: AbortSignal) => {
    const { mimeType, text } = await readAny(uri, contextOf(signal));
    return { contents: [{ uri, mimeType, text }] };
  };
  for (const resource of listResources(now())) {
    const { uri, name, ...metadata } = resource;
    server.registerResource(name, uri, metadata, (url, extra) => read(url.href, extra.signal));
  }
  const [actionTemplate, agentTemplate] = RESOURCE_TEMPLATES;
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
    if (!descriptor) continue;
    const { uriTemplate, name, ...metadata } = descriptor;
    server.registerResource(name, new ResourceTemplate(uriTemplate, { list: undefined, complete }), metadata, (url, _variables, extra) =>
      read(url.href, extra.signal),
    );
  }
  for (const declaration of DOMAIN_RESOURCES) {
    const type = declaration.type;
    const complete = {
      cluster: (typed: string) => {
        const view = now().view();
        return type === 'guest'
          ? matching(
              view.ofType('guest').map((r) => r.row.cluster ?? r.row.host ?? ''),
              typed,
            )
          : fleetNames(view, 'cluster', typed);
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
    server.registerResource(
      declaration.name,
      new ResourceTemplate(uriTemplateOf(declaration), { list: undefined, complete }),
      { title: declaration.title, description: declaration.description, mimeType: declaration.content === 'compose' ? 'application/yaml' : 'application/json' },
      (url, _variables, extra) => read(url.href, extra.signal),
    );
  }

  // resources/list in pages, each resource the identity may read once (the SDK's own list does not page).
  server.server.removeRequestHandler('resources/list');
  server.server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const all = everyResource(contextOf(extra.signal));
    const { items, nextCursor } = pageOf(all, request.params?.cursor, PAGE_SIZE);
    return { resources: items, ...(nextCursor ? { nextCursor } : {}) };
  });

  // resources/read by the same dispatch as everything here, so that a URI no template matches is answered like a hidden one (-32002).
  server.server.removeRequestHandler('resources/read');
  server.server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => read(request.params.uri, extra.signal));

  const subscriptions = new ResourceSubscriptions(
    async (uri) => {
      try {
        return (await readAny(uri, now())).text;
      } catch {
        return undefined;
      }
    },
    () => everyResource(now()).map((r) => r.uri),
    { updated: (uri) => server.server.sendResourceUpdated({ uri }), listChanged: () => server.server.sendResourceListChanged() },
  );
  server.server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const live = typeof matchDomain(uri)?.declaration.content === 'object';
    // A subscription to what the identity may not read is refused exactly like one to nothing.
    const { text } = await readAny(uri, contextOf(extra.signal));
    subscriptions.subscribe(uri, live, text);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.unsubscribe(request.params.uri);
    return {};
  });

  /** Per swarm, what the identity saw of it when last told: agent-answered resources are told only when that changed. */
  const swarmSeen = new Map<string, string>();
  return (what, key) => {
    const context = now();
    if (what === 'swarm') {
      const view = context.view();
      const swarm = view.swarms.find((s) => s.id === key);
      if (!swarm) return;
      const seen = createHash('sha256');
      for (const resource of view.resources) if (resource.snapshot?.cluster_id === key) seen.update(JSON.stringify(resource.record));
      const digest = seen.digest('base64');
      if (swarmSeen.get(key) === digest) {
        subscriptions.changed();
        return;
      }
      swarmSeen.set(key, digest);
      const prefix = `fleet://swarms/${encodeURIComponent(swarm.key)}`;
      subscriptions.changed((uri) => uri === prefix || uri.startsWith(`${prefix}/`));
      return;
    }
    // Everything else is about one host (`host`: its state, by name; the index's kinds: by id): only a host the identity reaches counts.
    const name = what === 'host' ? key : context.registry.list().find((h) => h.id === key)?.name;
    if (name !== undefined && context.identity.grants.reachesHost(name)) subscriptions.changed();
  };
}
