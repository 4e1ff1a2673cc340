import type { Action } from '../../../shared/catalog/action.ts';
import { clusterRefShape } from '../../../shared/domains/swarm/swarm-shapes.ts';
import { errorInfo, FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { Identity } from '../../auth/identities.ts';
import { forbidden, requireConfirm } from '../../calls/authorization.ts';
import { callTimeoutMs, parseParams, splitArguments } from '../../calls/call-arguments.ts';
import { lateNote } from '../../calls/call-audit.ts';
import { CallProgress } from '../../calls/call-progress.ts';
import type { RouteCall, RouteDeps, RunResult } from '../../calls/call-route.ts';
import { fanOut, type HostOutcome } from '../../fanout/fan-out.ts';
import type { FleetIndex } from '../../index/fleet-index.ts';
import type { DomainRoute } from '../broker-domain.ts';
import { checkSwarmReadParams, filterSwarmAnswer, type SwarmReadScope, swarmReadScope } from './swarm-grants.ts';
import { agentOnTaskNode, swarmResourceName } from './swarm-lookups.ts';
import { routeSwarmCall } from './swarm-routing.ts';

/**
 * Refuses a swarm call this identity may not make: a resource it names that
 * the identity may not see (as if it did not exist) or may not change, or a
 * read of a swarm it sees nothing of. Returns what a read may see of the
 * swarm, to filter its answer with.
 */
function checkSwarmGrants(
  identity: Identity,
  action: Action,
  params: Record<string, unknown>,
  index: FleetIndex,
  clusterId: string,
  clusterName: string,
): SwarmReadScope | undefined {
  const scope = action.resources;
  const named = scope?.param ? (params[scope.param] as string | undefined) : undefined;
  const reads = action.risk === 'read';
  if (scope && named !== undefined) {
    const name = swarmResourceName(index, clusterId, scope.kind, named);
    if (!identity.grants.resource(scope.kind, name)) {
      throw new FleetError('not_found', `no ${scope.kind} "${named}" in swarm ${clusterName}`, { hint: `find with type ${scope.kind} lists them.` });
    }
    if (!reads && !identity.grants.resource(scope.kind, name, 'write')) {
      throw new FleetError('forbidden', `${action.tool} needs a write grant on ${scope.kind} ${name}, which this identity does not have`, {
        hint: `Ask for an identity whose grants include ${scope.kind}:${name}=write.`,
      });
    }
  }
  const readScope = reads ? swarmReadScope(identity, index, clusterId) : undefined;
  if (readScope) checkSwarmReadParams(action, params, readScope, clusterName);
  return readScope;
}

/**
 * The route of swarm actions: one agent answers for the whole swarm, a manager
 * (healthiest first, failing over to the next) or, when the action says so,
 * the agent on the node of the task it names.
 */
async function runOnSwarm(call: RouteCall, deps: RouteDeps): Promise<RunResult> {
  const { action, identity, context } = call;
  const { params, confirm } = splitArguments(action, call.args);
  const parsed = parseParams(action, params);
  const reads = action.risk === 'read';
  const route = routeSwarmCall(deps.registry.list(), deps.index, parsed, (clusterId) => (reads ? !swarmReadScope(identity, deps.index, clusterId).none : true));
  const scope = action.resources;
  const named = scope?.param ? (parsed[scope.param] as string | undefined) : undefined;
  const readScope = checkSwarmGrants(identity, action, parsed, deps.index, route.clusterId, route.clusterName);
  const manager = route.managers[0] as Host;
  requireConfirm(action, confirm, [{ host: manager.name, ...(named !== undefined && scope ? { resource: `${scope.kind}:${named}` } : {}) }]);
  await call.begin([`swarm:${route.clusterName}`]);
  const timeoutMs = callTimeoutMs(action, parsed);
  // A task's container can only be changed by the engine it runs on: go to the agent on the task's node when there is one.
  const onTaskNode =
    action.answeredBy === 'task_node' && named !== undefined ? agentOnTaskNode(deps.registry.list(), deps.index, route.clusterId, named) : undefined;
  const callParams = onTaskNode && scope?.param ? { ...parsed, [scope.param]: onTaskNode.taskId } : parsed;
  const role = onTaskNode ? 'the node of the task' : `a manager of ${route.clusterName}`;
  const progress = new CallProgress(context);
  let failure: FleetError | undefined;
  for (const candidate of onTaskNode ? [onTaskNode.host] : route.managers) {
    progress.start(0, 1, `sent to ${candidate.name} (${role})`);
    const late = call.late;
    const [outcome] = await fanOut([candidate], {
      action: action.id,
      params: callParams,
      timeoutMs,
      caller: identity.name,
      callerLevel: call.callerLevel,
      authority: { identityId: identity.id, actionId: action.id, confirmed: confirm },
      signal: context.signal,
      onChunk: (host, payload) => progress.chunk(host.name, payload),
      ...(call.auditId ? { auditId: call.auditId } : {}),
      ...(late || context.onLog
        ? {
            onLate: ({ host, outcome: answer, durationMs }: HostOutcome) => {
              const error = answer.ok ? answer.errors[0] : answer.error;
              const note = lateNote(host.name, error?.code, durationMs, timeoutMs);
              context.onLog?.('notice', note, { host: host.name, duration_ms: Math.round(durationMs), timeout_ms: timeoutMs });
              late?.(error ? 'error' : 'ok', error?.code ?? null, note);
            },
          }
        : {}),
    });
    const result = outcome?.outcome;
    if (!result) break;
    if (result.ok && result.payload !== null && result.payload !== undefined) {
      const checked = action.output.safeParse(result.payload);
      if (!checked.success)
        throw new FleetError('internal', `the answer of ${candidate.name} does not match ${action.tool}'s result schema`, {
          hint: "Upgrade the agent to the broker's version.",
        });
      progress.settled(`${candidate.name}: answered`);
      const answer = checked.data as Record<string, unknown>;
      return {
        action,
        structured: {
          ...(readScope ? filterSwarmAnswer(action, answer, readScope) : answer),
          cluster: { id: route.clusterId, name: route.clusterName, manager: candidate.name },
        },
        isError: false,
        shape: 'broker',
      };
    }
    const error = result.ok ? (result.errors[0] ?? errorInfo('internal', 'the manager answered with nothing')) : result.error;
    // A change no manager acknowledged is a failure that names who had it: never an empty success.
    failure = new FleetError(error.code, `${candidate.name} (${onTaskNode ? role : `manager of ${route.clusterName}`}): ${error.message}`, {
      hint: error.hint,
      ...(error.collector ? { collector: error.collector } : {}),
      details: { agent: candidate.name },
    });
    // Fail over only where the call surely did not run, or where running it twice is harmless.
    const retry =
      error.code === 'agent_offline' ||
      error.code === 'collector_unavailable' ||
      (reads && (error.code === 'agent_disconnected' || error.code === 'deadline_exceeded'));
    if (!retry || context.signal.aborted) break;
    deps.log.warn('swarm manager failed; trying another', { manager: candidate.name, code: error.code, swarm: route.clusterName });
    context.onLog?.('warning', `${candidate.name} (manager of ${route.clusterName}) failed with ${error.code}; trying another manager`, {
      host: candidate.name,
      code: error.code,
      swarm: route.clusterName,
    });
  }
  throw failure ?? new FleetError('agent_offline', `no manager of swarm ${route.clusterName} answered`);
}

/** The swarm domain's route: one manager agent answers for its whole swarm, and a broker relaying to it checks the swarm's grants again. */
export const swarmRoute: DomainRoute = {
  run: runOnSwarm,
  checkRelayed(identity, action, params, host, index) {
    const clusterId = host.hello?.facts.swarm_id;
    if (typeof clusterId !== 'string' || !clusterId) throw forbidden(action, [host.name]);
    checkSwarmGrants(identity, action, params, index, clusterId, clusterId);
  },
  answerShape: { cluster: clusterRefShape },
};
