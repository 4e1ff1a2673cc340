import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Action, Level } from '../../shared/catalog/action.ts';
import { DEFAULT_TIMEOUT_MS, hostTargetShape, TARGET_KEYS } from '../../shared/catalog/targets.ts';
import { agentSetLabels } from '../../shared/domains/agent/agent-actions.ts';
import { removeTask } from '../../shared/domains/swarm/swarm-actions.ts';
import { type ErrorInfo, errorInfo, FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { Identity } from '../auth/identities.ts';
import { fanOut, type HostOutcome } from '../fanout/fan-out.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import { agentOnNode } from '../index/resource-catalog.ts';
import type { CallOutcome, CallRecorder } from '../metrics/broker-metrics.ts';
import type { MetricsStore } from '../metrics/metrics-store.ts';
import type { AuditOutcome } from '../store/audit-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { BrokerActionContext, BrokerActionHandler } from './broker-actions/broker-action.ts';
import { pageOfEnvelope } from './envelope-pages.ts';
import { type HostNode, toEnvelope, toNode } from './merge.ts';
import { redactArguments } from './redact.ts';
import type { RefusalAudit } from './refusal-audit.ts';
import { checkSwarmReadParams, filterSwarmAnswer, swarmReadScope } from './swarm-grants.ts';
import { routeSwarmCall } from './swarm-routing.ts';
import { type ResolvedTargets, resolveTargets } from './targets.ts';

export interface RunContext {
  /** The tool name the caller used, for the audit log. */
  tool: string;
  signal: AbortSignal;
  /** Progress as hosts settle: done of total, and what just happened. */
  onProgress?: (done: number, total: number, message: string) => void;
}

/** What a call produced: the complete structured result, and whether it counts as a failure. */
export interface RunResult {
  action: Action;
  structured: Record<string, unknown>;
  isError: boolean;
  shape: 'node' | 'envelope' | 'broker' | 'error';
}

export interface ActionRunnerOptions {
  registry: AgentRegistry;
  store: BrokerStore;
  log: Logger;
  /** The broker's cap on every identity's level. */
  operationsLevel: Level;
  index: FleetIndex;
  metrics: MetricsStore;
  brokerActions: readonly BrokerActionHandler[];
  /** Told how every call ended and how long it took (metrics). */
  recorder: CallRecorder;
  /** Where refused calls are audited, at a bounded rate. */
  refusals: RefusalAudit;
  /** Selectors of mutations also match labels agents declare themselves (--mutations-match-agent-labels). */
  mutationsMatchAgentLabels: boolean;
}

const targetArgumentsSchema = z.object(hostTargetShape).strict();

/** The structured form of a refusal. */
export function errorResult(action: Action, error: FleetError): RunResult {
  const { targets, grpcCode: _grpc, ...details } = error.details ?? {};
  return { action, structured: { error: { ...error.toInfo(), ...details }, ...(targets ? { targets } : {}) }, isError: true, shape: 'error' };
}

function describeIssue(action: Action, issue: z.core.$ZodIssue | undefined): FleetError {
  const shape = action.input.shape as Record<string, z.ZodType>;
  // Everything the tool takes: its own parameters, then what the broker adds (targets, confirm).
  const accepted = [
    ...Object.keys(shape),
    ...(action.runsOn === 'host' ? TARGET_KEYS : []),
    ...(action.risk === 'destructive' && !('confirm' in shape) ? ['confirm'] : []),
  ];
  const required = Object.keys(shape).filter((key) => !(shape[key] as z.ZodType).safeParse(undefined).success);
  const where = issue?.path.length ? issue.path.join('.') : 'arguments';
  const unknown = issue?.code === 'unrecognized_keys' ? ` (${(issue as { keys: string[] }).keys.join(', ')} not accepted)` : '';
  return new FleetError('invalid_argument', `${action.tool}: ${where}: ${issue?.message ?? 'invalid'}${unknown}`, {
    hint: `Accepted parameters: ${accepted.join(', ') || 'none'}${required.length ? `; required: ${required.join(', ')}` : ''}. fleet://actions/${action.id} has the full schema.`,
    details: { accepted, required },
  });
}

/**
 * The path of every tool call after its surface resolved the action: checks
 * level, arguments, targets, grants and confirmation; writes the audit row
 * before anything is sent; fans out (or asks the broker's own handler); merges
 * the answers; completes the audit row.
 */
export class ActionRunner {
  private readonly handlers: Map<string, BrokerActionHandler>;

  constructor(private readonly options: ActionRunnerOptions) {
    this.handlers = new Map(options.brokerActions.map((handler) => [handler.action.id, handler]));
  }

  effectiveLevel(identity: Identity): Level {
    return Math.min(identity.level, this.options.operationsLevel) as Level;
  }

  /** Whether the identity may see the action at all: within its level, and able to write if the action writes. */
  allows(identity: Identity, action: Action): boolean {
    if (action.level > this.effectiveLevel(identity)) return false;
    return action.risk === 'read' || identity.grants.writesAnything();
  }

  get index(): FleetIndex {
    return this.options.index;
  }

  get metrics(): MetricsStore {
    return this.options.metrics;
  }

  get refusals(): RefusalAudit {
    return this.options.refusals;
  }

  visibleHosts(identity: Identity): Host[] {
    return this.options.registry.list().filter((host) => identity.grants.reachesHost(host.name));
  }

  async run(identity: Identity, action: Action, args: Record<string, unknown>, context: RunContext): Promise<RunResult> {
    const startedMs = performance.now();
    const finished = (outcome: CallOutcome) =>
      this.options.recorder.callFinished({ tool: context.tool, action, outcome, durationMs: performance.now() - startedMs });
    const callId = randomUUID();
    const audited = action.level >= 1;
    const arguments_ = redactArguments(args, action.sensitive);
    let begun = false;
    const begin = (targets: string[], outcome: AuditOutcome = 'pending', errorCode: string | null = null) => {
      if (!audited) return;
      this.options.store.audit.begin({
        callId,
        startedAt: Date.now(),
        identity: identity.name,
        tool: context.tool,
        action: action.id,
        level: action.level,
        targets,
        targetIds: targets.flatMap((name) => this.options.registry.find(name)?.id ?? []),
        arguments: arguments_,
        outcome,
        errorCode,
      });
      begun = outcome === 'pending';
    };
    const complete = (outcome: AuditOutcome, errorCode: string | null) => {
      if (begun) this.options.store.audit.complete(callId, { outcome, errorCode, finishedAt: Date.now() });
    };
    // An agent that finishes after the call gave up on it: the row says how the call really ended.
    const lateNotes: string[] = [];
    const late: LateAudit | undefined = audited
      ? (outcome, errorCode, note) => {
          if (!begun) return;
          lateNotes.push(note);
          this.options.store.audit.complete(callId, { outcome, errorCode, finishedAt: Date.now(), note: lateNotes.join('; ') });
        }
      : undefined;
    try {
      if (!this.allows(identity, action)) throw new FleetError('not_found', `unknown tool: ${context.tool}`);
      const result =
        action.runsOn === 'broker'
          ? await this.runOnBroker(identity, action, args, context, begin)
          : action.runsOn === 'swarm'
            ? await this.runOnSwarm(identity, action, args, context, begin, late)
            : await this.runOnHosts(identity, action, args, context, begin, late);
      const outcome = auditOutcomeOf(result);
      complete(outcome, firstErrorCode(result));
      finished(outcome);
      return result;
    } catch (error) {
      const failure = toFleetError(error);
      const outcome = context.signal.aborted ? 'cancelled' : begun ? 'error' : 'refused';
      if (outcome === 'refused') {
        // Refusals of changes, and any grant refusal, are audited (at a bounded rate, see RefusalAudit).
        if (audited || failure.code === 'forbidden') {
          this.options.refusals.record({
            identity: identity.name,
            tool: context.tool,
            action: action.id,
            level: action.level,
            arguments: arguments_,
            errorCode: failure.code,
            reason: failure.message.slice(0, 500),
          });
        }
      } else complete(outcome, failure.code);
      finished(outcome);
      if (failure.code === 'internal') this.options.log.error('tool call failed', { tool: context.tool, error: failure.message });
      return errorResult(action, failure);
    }
  }

  private splitArguments(action: Action, args: Record<string, unknown>) {
    const targets: Record<string, unknown> = {};
    const params: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(args)) {
      if (action.runsOn === 'host' && (TARGET_KEYS as readonly string[]).includes(key)) targets[key] = value;
      else if (key === 'confirm' && !('confirm' in action.input.shape)) continue;
      else params[key] = value;
    }
    return { targets, params, confirm: args.confirm === true };
  }

  private parseParams(action: Action, params: Record<string, unknown>): Record<string, unknown> {
    const parsed = action.input.safeParse(params);
    if (!parsed.success) throw describeIssue(action, parsed.error.issues[0]);
    return parsed.data as Record<string, unknown>;
  }

  private async runOnBroker(
    identity: Identity,
    action: Action,
    args: Record<string, unknown>,
    context: RunContext,
    begin: (targets: string[]) => void,
  ): Promise<RunResult> {
    const handler = this.handlers.get(action.id);
    if (!handler) throw new FleetError('unsupported', `the broker has no handler for ${action.id}`);
    const { params, confirm } = this.splitArguments(action, args);
    const parsed = this.parseParams(action, params);
    const actionContext: BrokerActionContext = {
      identity,
      registry: this.options.registry,
      store: this.options.store,
      index: this.options.index,
      metrics: this.options.metrics,
      log: this.options.log,
      signal: context.signal,
      visibleHosts: () => this.visibleHosts(identity),
    };
    const targets = handler.targets?.(parsed, actionContext) ?? [];
    if (action.risk !== 'read') {
      const denied = targets.filter((host) => !identity.grants.host(host, 'write'));
      if (denied.length) throw forbidden(action, denied);
    }
    if (action.risk === 'destructive' && !confirm)
      throw confirmRequired(
        action,
        targets.map((host) => ({ host })),
      );
    begin(targets);
    const output = action.output.parse(await handler.run(parsed, actionContext)) as Record<string, unknown>;
    return { action, structured: output, isError: false, shape: 'broker' };
  }

  private async runOnSwarm(
    identity: Identity,
    action: Action,
    args: Record<string, unknown>,
    context: RunContext,
    begin: (targets: string[]) => void,
    late?: LateAudit,
  ): Promise<RunResult> {
    const { params, confirm } = this.splitArguments(action, args);
    const parsed = this.parseParams(action, params);
    const reads = action.risk === 'read';
    const route = routeSwarmCall(this.options.registry.list(), this.options.index, parsed, (clusterId) =>
      reads ? !swarmReadScope(identity, this.options.index, clusterId).none : true,
    );
    const scope = action.resources;
    const named = scope?.param ? (parsed[scope.param] as string | undefined) : undefined;
    if (scope && named !== undefined) {
      const name = swarmResourceName(this.options.index, route.clusterId, scope.kind, named);
      if (!identity.grants.resource(scope.kind, name)) {
        throw new FleetError('not_found', `no ${scope.kind} "${named}" in swarm ${route.clusterName}`, { hint: `find with type ${scope.kind} lists them.` });
      }
      if (action.risk !== 'read' && !identity.grants.resource(scope.kind, name, 'write')) {
        throw new FleetError('forbidden', `${action.tool} needs a write grant on ${scope.kind} ${name}, which this identity does not have`, {
          hint: `Ask for an identity whose grants include ${scope.kind}:${name}=write.`,
        });
      }
    }
    const readScope = reads ? swarmReadScope(identity, this.options.index, route.clusterId) : undefined;
    if (readScope) checkSwarmReadParams(action.id, parsed, readScope, route.clusterName);
    const manager = route.managers[0] as Host;
    if (action.risk === 'destructive' && !confirm) {
      throw confirmRequired(action, [{ host: manager.name, ...(named !== undefined && scope ? { resource: `${scope.kind}:${named}` } : {}) }]);
    }
    begin([`swarm:${route.clusterName}`]);
    const timeoutMs = callTimeoutMs(action, parsed);
    // A task's container can only be removed by the engine it runs on: go to the agent on the task's node when there is one.
    const onTaskNode = action.id === removeTask.id ? this.agentOnTaskNode(route.clusterId, String(parsed.id)) : undefined;
    const callParams = onTaskNode ? { ...parsed, id: onTaskNode.taskId } : parsed;
    let failure: FleetError | undefined;
    for (const candidate of onTaskNode ? [onTaskNode.host] : route.managers) {
      context.onProgress?.(
        0,
        1,
        onTaskNode ? `sent to ${candidate.name} (the node of the task)` : `sent to ${candidate.name} (a manager of ${route.clusterName})`,
      );
      const [outcome] = await fanOut([candidate], {
        action: action.id,
        params: callParams,
        timeoutMs,
        caller: identity.name,
        callerLevel: this.effectiveLevel(identity),
        signal: context.signal,
        ...(late
          ? {
              onLate: ({ host, outcome: answer, durationMs }: HostOutcome) => {
                const error = answer.ok ? answer.errors[0] : answer.error;
                late(error ? 'error' : 'ok', error?.code ?? null, lateNote(host.name, error?.code, durationMs, timeoutMs));
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
        context.onProgress?.(1, 1, `${candidate.name}: answered`);
        return {
          action,
          structured: {
            ...(readScope ? filterSwarmAnswer(action.id, checked.data as Record<string, unknown>, readScope) : (checked.data as Record<string, unknown>)),
            cluster: { id: route.clusterId, name: route.clusterName, manager: candidate.name },
          },
          isError: false,
          shape: 'broker',
        };
      }
      const error = result.ok ? (result.errors[0] ?? errorInfo('internal', 'the manager answered with nothing')) : result.error;
      // A change no manager acknowledged is a failure that names who had it: never an empty success.
      failure = new FleetError(error.code, `${candidate.name} (${onTaskNode ? 'the node of the task' : `manager of ${route.clusterName}`}): ${error.message}`, {
        hint: error.hint,
        ...(error.collector ? { collector: error.collector } : {}),
        details: { agent: candidate.name },
      });
      // Fail over only where the call surely did not run, or where running it twice is harmless.
      const retry =
        error.code === 'agent_offline' ||
        error.code === 'collector_unavailable' ||
        (action.risk === 'read' && (error.code === 'agent_disconnected' || error.code === 'deadline_exceeded'));
      if (!retry || context.signal.aborted) break;
      this.options.log.warn('swarm manager failed; trying another', { manager: candidate.name, code: error.code, swarm: route.clusterName });
    }
    throw failure ?? new FleetError('agent_offline', `no manager of swarm ${route.clusterName} answered`);
  }

  /** The connected agent on the node a task runs on (the index knows the task), with the task's full id. */
  private agentOnTaskNode(clusterId: string, ref: string): { host: Host; taskId: string } | undefined {
    const snapshot = this.options.index.swarm(clusterId)?.snapshot;
    const task =
      snapshot?.tasks.find((t) => t.id === ref || (ref.length >= 6 && t.id.startsWith(ref))) ??
      snapshot?.tasks.find((t) => t.name === ref && t.desired_state === 'running');
    if (!task?.node_id) return undefined;
    // The node id is the agent's claim: an agent of another swarm, or two agents naming one node, route nothing.
    const host = agentOnNode(
      this.options.registry.list().filter((h) => h.hello?.facts.swarm_id === clusterId),
      task.node_id,
    );
    const claimants = this.options.registry.list().filter((h) => h.hello?.facts.swarm_node_id === task.node_id);
    return host?.session && host.state !== 'offline' && claimants.length === 1 ? { host, taskId: task.id } : undefined;
  }

  /** The host the index says holds a resource (a sandbox lives on one host), answered as that host's node. */
  private locate(identity: Identity, kind: string, name: string): ResolvedTargets {
    let holders = this.visibleHosts(identity).filter((host) =>
      (this.options.index.inventory(host.id)?.inventory.containers ?? []).some((c) => kind === 'sandbox' && c.sandbox_id === name),
    );
    // An offline host's last inventory stays in the index; prefer the hosts that can answer now.
    if (holders.length > 1 && holders.some((h) => h.session)) holders = holders.filter((h) => h.session);
    if (holders.length === 0) {
      throw new FleetError('not_found', `no ${kind} "${name}" in the fleet`, { hint: 'snapshot without sandbox_id lists the sandboxes of every host.' });
    }
    if (holders.length > 1) {
      throw new FleetError('ambiguous', `${kind} "${name}" is on ${holders.length} hosts`, {
        hint: `Pass host: one of ${holders.map((h) => h.name).join(', ')}.`,
      });
    }
    return { hosts: holders, single: true };
  }

  private async runOnHosts(
    identity: Identity,
    action: Action,
    args: Record<string, unknown>,
    context: RunContext,
    begin: (targets: string[]) => void,
    late?: LateAudit,
  ): Promise<RunResult> {
    const { targets: targetArgs, params, confirm } = this.splitArguments(action, args);
    const targetParsed = targetArgumentsSchema.safeParse(targetArgs);
    if (!targetParsed.success) throw describeIssue(action, targetParsed.error.issues[0]);
    // A page is fetched by calling again, which must never repeat a change.
    if (targetParsed.data.cursor !== undefined && action.risk !== 'read') {
      throw new FleetError('invalid_argument', `${action.tool} changes things, so its answer comes whole and takes no cursor`, {
        hint: 'Call it without cursor.',
      });
    }
    const parsed = this.parseParams(action, params);
    const scope = action.resources;
    const resourceName = scope?.param ? (parsed[scope.param] as string | undefined) : undefined;
    const untargeted = Object.keys(targetParsed.data).every((key) => key === 'timeout_ms' || key === 'cursor');
    const resolved: ResolvedTargets =
      scope?.locate && resourceName !== undefined && untargeted
        ? this.locate(identity, scope.kind, resourceName)
        : resolveTargets(this.options.registry.list(), identity, action, targetParsed.data, {
            mutationsMatchAgentLabels: this.options.mutationsMatchAgentLabels,
            maySetLabels: this.allows(identity, agentSetLabels),
          });
    const writes = action.risk !== 'read';
    // Hosts where the named resource is hidden answer not_found, as if it did not exist there.
    const hidden = new Set<Host>();
    const denied: string[] = [];
    // A grant on some containers of a host is not a grant on the host: its processes, ports and stats stay hidden.
    const answersPerContainer =
      scope !== undefined && (scope.kind === 'container' || scope.kind === 'sandbox') && (resourceName !== undefined || !!scope.lists?.length);
    const partial = new Set<Host>();
    for (const host of resolved.hosts) {
      if (!answersPerContainer && !identity.grants.host(host.name)) {
        partial.add(host);
        hidden.add(host);
      } else if (resourceName !== undefined && scope) {
        const name = `${host.name}/${resourceName}`;
        if (!identity.grants.resource(scope.kind, name)) hidden.add(host);
        else if (writes && !identity.grants.resource(scope.kind, name, 'write')) denied.push(host.name);
      } else if (writes && !identity.grants.host(host.name, 'write')) {
        denied.push(host.name);
      }
    }
    if (denied.length) throw forbidden(action, denied);
    const live = resolved.hosts.filter((host) => !hidden.has(host));
    if (action.risk === 'destructive' && !confirm) {
      throw confirmRequired(
        action,
        live.map((host) => ({ host: host.name, ...(resourceName !== undefined && scope ? { resource: `${scope.kind}:${host.name}/${resourceName}` } : {}) })),
      );
    }
    begin(resolved.hosts.map((host) => host.name));
    const total = resolved.hosts.length;
    const hiddenOutcomes: HostOutcome[] = [...hidden].map((host) => ({
      host,
      outcome: {
        ok: false,
        error: partial.has(host)
          ? errorInfo(
              'not_found',
              `${action.tool} shows the whole of ${host.name}, and this identity may see only some of its containers`,
              'Ask for a host grant, or use the container tools.',
            )
          : errorInfo('not_found', `no ${scope?.kind ?? 'resource'} "${resourceName}" on ${host.name}`, 'List what exists on that host first.'),
      },
      durationMs: 0,
    }));
    let done = hiddenOutcomes.length;
    context.onProgress?.(done, total, `sent to ${live.length} host${live.length === 1 ? '' : 's'}`);
    const timeoutMs = callTimeoutMs(action, parsed, targetParsed.data.timeout_ms);
    const resultOf = (settled: HostOutcome[]): RunResult => {
      const nodes: HostNode[] = settled.map((outcome) => toNode(outcome, action, identity));
      if (resolved.single) {
        const node = nodes[0] as HostNode;
        return { action, structured: node, isError: node.availability === 'unavailable', shape: 'node' };
      }
      // Writes never page: fetching a later page would mean repeating the change.
      const envelope = action.risk === 'read' ? pageOfEnvelope(toEnvelope(nodes), targetParsed.data.cursor) : toEnvelope(nodes);
      return {
        action,
        structured: envelope as unknown as Record<string, unknown>,
        isError: envelope.targeted > 0 && envelope.responded === 0,
        shape: 'envelope',
      };
    };
    let settled: HostOutcome[] = [];
    const outcomes = await fanOut(live, {
      action: action.id,
      params: parsed,
      timeoutMs,
      caller: identity.name,
      callerLevel: this.effectiveLevel(identity),
      signal: context.signal,
      onHostDone: (outcome) => {
        done += 1;
        context.onProgress?.(done, total, `${outcome.host.name}: ${outcome.outcome.ok ? 'answered' : outcome.outcome.error.code}`);
      },
      ...(late
        ? {
            onLate: (answer: HostOutcome) => {
              settled = settled.map((outcome) => (outcome.host === answer.host ? answer : outcome));
              const result = resultOf(settled);
              const error = answer.outcome.ok ? answer.outcome.errors[0] : answer.outcome.error;
              late(auditOutcomeOf(result), firstErrorCode(result), lateNote(answer.host.name, error?.code, answer.durationMs, timeoutMs));
            },
          }
        : {}),
    });
    settled = [...hiddenOutcomes, ...outcomes];
    if (context.signal.aborted) throw new FleetError('deadline_exceeded', 'the call was cancelled by the client');
    return resultOf(settled);
  }
}

/** Beyond an action's own wait: time for the agent to begin the work and for its answer to come back. */
const WAIT_MARGIN_MS = 5_000;

/** The call's deadline: the caller's (or the default), stretched to cover what the action waits for by design. */
function callTimeoutMs(action: Action, params: Record<string, unknown>, requestedMs = DEFAULT_TIMEOUT_MS): number {
  const waitsMs = action.waitsMs?.(params) ?? 0;
  return waitsMs > 0 ? Math.max(requestedMs, waitsMs + WAIT_MARGIN_MS) : requestedMs;
}

/** Completes an audit row again with what an agent answered after the call gave up on it. */
type LateAudit = (outcome: AuditOutcome, errorCode: string | null, note: string) => void;

function lateNote(host: string, errorCode: string | undefined, durationMs: number, timeoutMs: number): string {
  return `${host} answered ${errorCode ?? 'ok'} after ${Math.round(durationMs)} ms, past the call's ${timeoutMs} ms deadline`;
}

function auditOutcomeOf(result: RunResult): 'ok' | 'partial' | 'error' {
  if (result.isError) return 'error';
  return result.structured.errors && (result.structured.errors as unknown[]).length ? 'partial' : 'ok';
}

/** The name grants match for a swarm resource named by id or name. */
function swarmResourceName(index: FleetIndex, clusterId: string, kind: string, value: string): string {
  const snapshot = index.swarm(clusterId)?.snapshot;
  if (!snapshot) return value;
  const match = (id: string) => id === value || (value.length >= 6 && id.startsWith(value));
  const found =
    kind === 'service'
      ? snapshot.services.find((s) => match(s.id))?.name
      : kind === 'node'
        ? snapshot.nodes.find((n) => match(n.id))?.hostname
        : kind === 'task'
          ? snapshot.tasks.find((t) => match(t.id))?.name
          : kind === 'secret'
            ? snapshot.secrets.find((s) => match(s.id))?.name
            : kind === 'config'
              ? snapshot.configs.find((c) => match(c.id))?.name
              : kind === 'network'
                ? snapshot.networks.find((n) => match(n.id))?.name
                : undefined;
  return found ?? value;
}

function firstErrorCode(result: RunResult): string | null {
  const errors = (result.structured.errors ?? []) as ErrorInfo[];
  return errors[0]?.code ?? null;
}

function forbidden(action: Action, hosts: string[]): FleetError {
  return new FleetError('forbidden', `${action.tool} needs a write grant on ${hosts.join(', ')}, which this identity does not have`, {
    hint: 'Ask for an identity whose grants include write on those hosts (fleetmesh identity create … --grant host:NAME=write).',
  });
}

function confirmRequired(action: Action, targets: { host: string; resource?: string }[]): FleetError {
  const list = targets.map((t) => t.resource ?? t.host).join(', ') || 'nothing';
  return new FleetError('confirm_required', `${action.tool} is destructive; it would act on: ${list}`, {
    hint: 'Nothing was changed. Call again with confirm: true to go ahead.',
    details: { targets },
  });
}
