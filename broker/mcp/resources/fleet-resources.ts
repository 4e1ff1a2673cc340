import type { Action } from '../../../shared/catalog/action.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { closestNames } from '../../../shared/format/closest-names.ts';
import type { AgentRegistry } from '../../agents/agent-registry.ts';
import { assessClaims } from '../../agents/claims.ts';
import type { Identity } from '../../auth/identities.ts';
import type { ActionRunner } from '../../calls/action-runner.ts';
import type { BrokerActionContext } from '../../calls/broker-action.ts';
import { fleetStatusHandler } from '../../domains/fleet/fleet-status.ts';
import { agentRow, listAgentsHandler } from '../../domains/fleet/list-agents.ts';
import { recommendationsHandler } from '../../domains/fleet/recommendations.ts';
import type { BrokerStore } from '../../store/broker-store.ts';
import type { Surface } from '../surfaces/surface.ts';
import { requiredParameters, toolInputSchema, toolOutputSchema } from '../surfaces/tool-schemas.ts';
import type { FleetView } from './fleet-view.ts';

interface ResourceDescriptor {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
}

interface ResourceTemplateDescriptor {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
}

export interface ResourceContext {
  identity: Identity;
  surface: Surface;
  visibleActions: readonly Action[];
  registry: AgentRegistry;
  store: BrokerStore;
  brokerContext: BrokerActionContext;
  /** The identity's effective level, for level-3-only resources. */
  level: number;
  runner: ActionRunner;
  /** The request's cancellation, passed to what a read runs. */
  signal: AbortSignal;
  /** The fleet index as this identity may see it. */
  view(): FleetView;
}

/**
 * Resource reads answer this for anything the caller may not see, exactly like
 * for what does not exist; `known` (what the caller may see) gives the closest URIs.
 */
export function resourceNotFound(uri: string, known: readonly string[] = []): FleetError {
  const closest = closestNames(uri, known);
  return new FleetError('not_found', `no resource ${uri}`, {
    hint: closest.length
      ? `Closest: ${closest.join(', ')}. resources/list and resources/templates/list show what this identity may read.`
      : 'resources/list and resources/templates/list show what this identity may read.',
  });
}

/**
 * The fleet documents that answer what a tool answers: hidden, and read as
 * not found, where that tool is (switched off, or above the caller).
 */
const ANSWERED_BY: Record<string, Action> = {
  'fleet://agents': listAgentsHandler.action,
  'fleet://status': fleetStatusHandler.action,
  'fleet://recommendations': recommendationsHandler.action,
};

/** Whether the identity may read a fleet document (or an agent's) as far as the tool answering it goes. */
function offered(uri: string, context: ResourceContext): boolean {
  const action = ANSWERED_BY[uri.startsWith('fleet://agents/') ? 'fleet://agents' : uri];
  return action === undefined || context.runner.allows(context.identity, action);
}

export function listResources(context: ResourceContext): ResourceDescriptor[] {
  return fleetDocuments(context).filter((resource) => offered(resource.uri, context));
}

function fleetDocuments(context: ResourceContext): ResourceDescriptor[] {
  const resources: ResourceDescriptor[] = [
    {
      uri: 'fleet://actions',
      name: 'actions',
      title: 'Action catalog',
      description: 'Every action this identity may run, with the tool and call line for this surface.',
      mimeType: 'application/json',
    },
    {
      uri: 'fleet://agents',
      name: 'agents',
      title: 'Agents',
      description: 'Every agent with its state, labels, collectors and latest sample. Subscribable.',
      mimeType: 'application/json',
    },
    {
      uri: 'fleet://status',
      name: 'status',
      title: 'Fleet status',
      description: 'What get_fleet_status answers with default thresholds. Subscribable.',
      mimeType: 'application/json',
    },
    {
      uri: 'fleet://recommendations',
      name: 'recommendations',
      title: 'Recommendations',
      description: 'What get_recommendations finds: what to fix in the fleet.',
      mimeType: 'application/json',
    },
  ];
  if (context.level >= 3) {
    resources.push({
      uri: 'fleet://audit',
      name: 'audit',
      title: 'Audit log',
      description: 'The latest 100 audit rows, newest first: calls of level 1 or more, and refusals with their reason.',
      mimeType: 'application/json',
    });
  }
  return resources;
}

export const RESOURCE_TEMPLATES: ResourceTemplateDescriptor[] = [
  {
    uriTemplate: 'fleet://actions/{id}',
    name: 'action',
    title: 'Action',
    description: 'One action in full: description, input and output schemas with every bound, required parameters, related actions.',
    mimeType: 'application/json',
  },
  {
    uriTemplate: 'fleet://agents/{name}',
    name: 'agent',
    title: 'Agent',
    description: 'One agent as list_agents shows it. Subscribable.',
    mimeType: 'application/json',
  },
];

function actionSummary(action: Action, surface: Surface) {
  return {
    id: action.id,
    title: action.title,
    // The action's own tool name, which `fleetmesh call` accepts on every surface.
    name: action.tool,
    tool: surface.toolFor(action),
    call: surface.callLine(action),
    risk: action.risk,
    level: action.level,
    mutating: action.risk !== 'read',
    destructive: action.risk === 'destructive',
  };
}

/** Reads one fleet:// resource as the identity may see it. */
export async function readResource(uri: string, context: ResourceContext): Promise<unknown> {
  if (!offered(uri, context))
    throw resourceNotFound(
      uri,
      listResources(context).map((r) => r.uri),
    );
  if (uri === 'fleet://actions') {
    return {
      surface: context.surface.name,
      count: context.visibleActions.length,
      actions: context.visibleActions.map((a) => actionSummary(a, context.surface)),
    };
  }
  const actionMatch = /^fleet:\/\/actions\/(.+)$/.exec(uri);
  if (actionMatch) {
    const action = context.visibleActions.find((a) => a.id === decodeURIComponent(actionMatch[1] ?? ''));
    if (!action)
      throw resourceNotFound(
        uri,
        context.visibleActions.map((a) => `fleet://actions/${a.id}`),
      );
    return {
      ...actionSummary(action, context.surface),
      description: action.description,
      runs_on: action.runsOn,
      collector: action.collector,
      required: requiredParameters(action),
      input_schema: toolInputSchema(action),
      // tools/list leaves output schemas out (see the README); this is where a client or model finds one.
      output_schema: toolOutputSchema(action),
      related: (action.related ?? []).filter((id) => context.visibleActions.some((a) => a.id === id)),
    };
  }
  if (uri === 'fleet://agents') {
    const claims = assessClaims(context.brokerContext.registry.list(), context.brokerContext.index);
    const agents = context.brokerContext.visibleHosts().map((host) => agentRow(host, claims.get(host.id) ?? [], context.brokerContext.identity));
    return { count: agents.length, agents };
  }
  const agentMatch = /^fleet:\/\/agents\/(.+)$/.exec(uri);
  if (agentMatch) {
    const name = decodeURIComponent(agentMatch[1] ?? '').toLowerCase();
    const host = context.brokerContext.visibleHosts().find((h) => h.name.toLowerCase() === name || h.id === name);
    if (!host)
      throw resourceNotFound(
        uri,
        context.brokerContext.visibleHosts().map((h) => `fleet://agents/${h.name}`),
      );
    return agentRow(host, assessClaims(context.brokerContext.registry.list(), context.brokerContext.index).get(host.id) ?? [], context.brokerContext.identity);
  }
  if (uri === 'fleet://status') return fleetStatusHandler.run({}, context.brokerContext);
  if (uri === 'fleet://recommendations') return recommendationsHandler.run({}, context.brokerContext);
  if (uri === 'fleet://audit' && context.level >= 3) {
    return {
      entries: (await context.store.audit.recent({ limit: 100 })).map((row) => ({
        call_id: row.callId,
        started_at_unix_ms: row.startedAt,
        finished_at_unix_ms: row.finishedAt,
        identity: row.identity,
        tool: row.tool,
        action: row.action,
        level: row.level,
        targets: row.targets,
        target_ids: row.targetIds,
        arguments: row.arguments,
        outcome: row.outcome,
        error_code: row.errorCode,
        duration_ms: row.durationMs,
        note: row.note,
        source: row.source,
        reason: row.reason,
        subject: row.subject,
        email: row.email,
        client_id: row.clientId,
        approved_by: row.approvedBy,
      })),
    };
  }
  throw resourceNotFound(uri, [...listResources(context).map((r) => r.uri), ...RESOURCE_TEMPLATES.map((t) => t.uriTemplate)]);
}
