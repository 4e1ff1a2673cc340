import { CATALOG } from '../../shared/catalog/catalog.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Host } from '../agents/agent-registry.ts';
import { fanOut, type HostOutcome } from '../fanout/fan-out.ts';
import { type HostNode, toEnvelope, toNode } from '../fanout/merge.ts';
import { requireConfirm } from './authorization.ts';
import { callTimeoutMs, parseParams, parseTargets, splitArguments } from './call-arguments.ts';
import { auditOutcomeOf, firstErrorCode, lateNote } from './call-audit.ts';
import { CallProgress } from './call-progress.ts';
import type { RouteCall, RouteDeps, RunResult } from './call-route.ts';
import { pageOfEnvelope } from './envelope-pages.ts';
import { locateResource, partitionByGrants } from './host-visibility.ts';
import { type ResolvedTargets, resolveTargets } from './targets.ts';

interface HostsRouteDeps extends RouteDeps {
  mutationsMatchAgentLabels: boolean;
  visibleHosts(): Host[];
  /** Whether the caller may run this action (for hints offering another tool). */
  allows(action: (typeof CATALOG)[number]): boolean;
}

/**
 * The route of host actions: resolve the targets, hide what grants hide, fan
 * the call out to every agent at once, stream their chunks as progress, and
 * merge the answers into one host's node or a fleet envelope.
 */
export async function runOnHosts(call: RouteCall, deps: HostsRouteDeps): Promise<RunResult> {
  const { action, identity, context } = call;
  const { targets: targetArgs, params, confirm } = splitArguments(action, call.args);
  const targets = parseTargets(action, targetArgs);
  // A page is fetched by calling again, which must never repeat a change.
  if (targets.cursor !== undefined && action.risk !== 'read') {
    throw new FleetError('invalid_argument', `${action.tool} changes things, so its answer comes whole and takes no cursor`, {
      hint: 'Call it without cursor.',
    });
  }
  const parsed = parseParams(action, params);
  const scope = action.resources;
  const resourceName = scope?.param ? (parsed[scope.param] as string | undefined) : undefined;
  const untargeted = Object.keys(targets).every((key) => key === 'timeout_ms' || key === 'cursor');
  const resolved: ResolvedTargets =
    scope?.locate && resourceName !== undefined && untargeted
      ? locateResource(deps.visibleHosts(), deps.index, scope.kind, resourceName)
      : resolveTargets(deps.registry.list(), identity, action, targets, {
          mutationsMatchAgentLabels: deps.mutationsMatchAgentLabels,
          maySetLabels: CATALOG.some((other) => other.setsLabels && deps.allows(other)),
        });
  const { live, hidden } = partitionByGrants(identity, action, resolved.hosts, resourceName);
  requireConfirm(
    action,
    confirm,
    live.map((host) => ({ host: host.name, ...(resourceName !== undefined && scope ? { resource: `${scope.kind}:${host.name}/${resourceName}` } : {}) })),
  );
  await call.begin(resolved.hosts.map((host) => host.name));
  const progress = new CallProgress(context);
  progress.start(hidden.length, resolved.hosts.length, `sent to ${live.length} host${live.length === 1 ? '' : 's'}`);
  const timeoutMs = callTimeoutMs(action, parsed, targets.timeout_ms);
  const resultOf = (settled: HostOutcome[]): RunResult => {
    const nodes: HostNode[] = settled.map((outcome) => toNode(outcome, action, { identity, resourceNamed: resourceName !== undefined }));
    if (resolved.single) {
      const node = nodes[0] as HostNode;
      return { action, structured: node, isError: node.availability === 'unavailable', shape: 'node' };
    }
    // Writes never page: fetching a later page would mean repeating the change.
    const whole = toEnvelope(nodes, resolved.absent);
    const envelope = action.risk === 'read' ? pageOfEnvelope(whole, targets.cursor) : whole;
    return { action, structured: envelope, isError: envelope.targeted > 0 && envelope.responded === 0, shape: 'envelope' };
  };
  let settled: HostOutcome[] = [];
  const late = call.late;
  const outcomes = await fanOut(live, {
    action: action.id,
    params: parsed,
    timeoutMs,
    caller: identity.name,
    callerLevel: call.callerLevel,
    authority: { identityId: identity.id, actionId: action.id, confirmed: confirm },
    signal: context.signal,
    onChunk: (host, payload) => progress.chunk(host.name, payload),
    onHostDone: ({ host, outcome }) => {
      progress.settled(`${host.name}: ${outcome.ok ? 'answered' : outcome.error.code}`);
      if (!outcome.ok) context.onLog?.('warning', `${host.name} did not answer: ${outcome.error.code}`, { host: host.name, code: outcome.error.code });
    },
    ...(call.auditId ? { auditId: call.auditId } : {}),
    ...(late || context.onLog
      ? {
          onLate: (answer: HostOutcome) => {
            const error = answer.outcome.ok ? answer.outcome.errors[0] : answer.outcome.error;
            const note = lateNote(answer.host.name, error?.code, answer.durationMs, timeoutMs, context.signal.aborted);
            context.onLog?.('notice', note, { host: answer.host.name, duration_ms: Math.round(answer.durationMs), timeout_ms: timeoutMs });
            if (!late) return;
            settled = settled.map((outcome) => (outcome.host === answer.host ? answer : outcome));
            const result = resultOf(settled);
            late(auditOutcomeOf(result), firstErrorCode(result), note);
          },
        }
      : {}),
  });
  settled = [...hidden, ...outcomes];
  if (context.signal.aborted) throw new FleetError('cancelled', 'the call was cancelled by the client');
  return resultOf(settled);
}
