import type { Action, Level } from '../../shared/catalog/action.ts';
import { CATALOG } from '../../shared/catalog/catalog.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Host } from '../agents/agent-registry.ts';
import { type Identity, identityOfRow } from '../auth/identities.ts';
import type { ToolFilter } from '../auth/tool-filter.ts';
import { allowsAction, effectiveLevel, forbidden } from '../calls/authorization.ts';
import type { BrokerActionHandler } from '../calls/broker-action.ts';
import { partitionByGrants } from '../calls/host-visibility.ts';
import { BROKER_DOMAINS } from '../domains/broker-domains.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { CallRequestMessage } from './bus-messages.ts';

export interface RelayAuthorizationDeps {
  store: Pick<BrokerStore, 'identities' | 'audit'>;
  index: FleetIndex;
  /** This broker's cap on every identity's level. */
  operationsLevel: Level;
  /** The tools this broker's operator switched off. */
  tools: ToolFilter;
  /** The broker's own actions, for the agent actions each sends (`sends`). */
  brokerActions: readonly BrokerActionHandler[];
  selfId: string;
}

/** What a relayed call runs as, once authorised here. */
export interface RelayedCall {
  identity: Identity;
  /** The catalog action the identity called. */
  action: Action;
  callerLevel: Level;
}

const ACTIONS = new Map(CATALOG.map((action) => [action.id, action]));

/**
 * Authorises again, on the broker that holds the agents, a call another
 * broker sends: what the sender says about the caller is checked against the
 * store, never taken on its word. The identity must be live and its level
 * (capped by this broker's operations level) and grants must allow the action
 * on each of these agents; a destructive call must have been confirmed; and a
 * change (level 1 and up) must have its audit row pending on the store, begun
 * by the sending broker for this identity and action, where this broker then
 * notes that it ran it. Throws the FleetError the caller would have got.
 */
export async function authorizeRelayedCall(
  deps: RelayAuthorizationDeps,
  request: CallRequestMessage,
  sender: string,
  hosts: readonly Host[],
): Promise<RelayedCall> {
  const { authority } = request;
  const action = ACTIONS.get(authority.actionId);
  if (!action) throw new FleetError('invalid_argument', `broker ${sender} relayed a call for ${authority.actionId}, which is no action of this broker`);
  const handler = action.runsOn === 'broker' ? deps.brokerActions.find((candidate) => candidate.action.id === action.id) : undefined;
  const sends = action.runsOn === 'broker' ? (handler?.sends ?? []) : [action.id];
  if (!sends.includes(request.action)) {
    throw new FleetError('forbidden', `${action.tool} does not send ${request.action} to agents`, { hint: 'Call the tool itself through any broker.' });
  }
  const row = await deps.store.identities.get(authority.identityId);
  const now = Date.now();
  if (!row || row.revokedAt !== null || row.expiresAt <= now || row.name !== request.caller) {
    throw new FleetError('forbidden', `the identity broker ${sender} calls ${action.tool} for is not a live identity on the store`, {
      hint: 'The identity was revoked or expired: sign in with a live identity token.',
    });
  }
  const identity = identityOfRow(row);
  if (!allowsAction(identity, action, deps.operationsLevel, deps.tools)) {
    throw new FleetError('forbidden', `${action.tool} is above what identity ${identity.name} may do on broker ${deps.selfId}`, {
      hint: 'Ask for an identity of a higher level, or raise --operations-level on every broker of the cluster.',
    });
  }
  if (action.risk === 'destructive' && !authority.confirmed) {
    throw new FleetError('confirm_required', `${action.tool} is destructive and the call was not confirmed`, { hint: 'Call again with confirm: true.' });
  }
  checkGrants(deps, identity, action, request, hosts);
  if (action.level >= 1) await checkAudit(deps, identity, action, request, sender, hosts);
  return { identity, action, callerLevel: effectiveLevel(identity, deps.operationsLevel) };
}

function checkGrants(deps: RelayAuthorizationDeps, identity: Identity, action: Action, request: CallRequestMessage, hosts: readonly Host[]): void {
  const params = (request.params ?? {}) as Record<string, unknown>;
  if (action.runsOn === 'host') {
    const scope = action.resources;
    const resourceName = scope?.param ? (params[scope.param] as string | undefined) : undefined;
    const { hidden } = partitionByGrants(identity, action, hosts, resourceName);
    if (hidden.length)
      throw forbidden(
        action,
        hidden.map((outcome) => outcome.host.name),
      );
  } else if (action.runsOn !== 'broker') {
    const route = BROKER_DOMAINS.find((broker) => broker.domain.name === action.runsOn)?.route;
    if (!route)
      throw forbidden(
        action,
        hosts.map((host) => host.name),
      );
    for (const host of hosts) route.checkRelayed(identity, action, params, host, deps.index);
  } else {
    const needs = action.risk === 'read' ? 'read' : 'write';
    const denied = hosts.filter((host) => !identity.grants.host(host.name, needs)).map((host) => host.name);
    if (denied.length) throw forbidden(action, denied);
  }
}

async function checkAudit(
  deps: RelayAuthorizationDeps,
  identity: Identity,
  action: Action,
  request: CallRequestMessage,
  sender: string,
  hosts: readonly Host[],
): Promise<void> {
  const row = request.auditId === undefined ? undefined : await deps.store.audit.get(request.auditId);
  if (row?.outcome !== 'pending' || row.brokerId !== sender || row.identity !== identity.name || row.action !== action.id) {
    throw new FleetError('forbidden', `broker ${sender} sent ${action.tool} without its pending audit row`, {
      hint: 'Changes are audited before they are sent: call again through any broker.',
    });
  }
  await deps.store.audit.noteLate(row.callId, `run on broker ${deps.selfId} for ${hosts.map((host) => host.name).join(', ')}`);
}
