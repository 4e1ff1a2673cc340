import type { Action, Level } from '../../shared/catalog/action.ts';
import { FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import { auditPeopleOf, type Identity } from '../auth/identities.ts';
import type { ToolFilter } from '../auth/tool-filter.ts';
import { BROKER_DOMAINS } from '../domains/broker-domains.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { CallOutcome, CallRecorder } from '../metrics/broker-metrics.ts';
import type { UsageHistory } from '../metrics/usage-history.ts';
import type { BrokerServices } from '../services/broker-services.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { answerAudit } from './answer-audit.ts';
import { ApprovalGate } from './approvals/approval-gate.ts';
import { type ApprovalRule, needsApproval } from './approvals/approval-rule.ts';
import { allowsAction, effectiveLevel } from './authorization.ts';
import type { BrokerActionContext, BrokerActionHandler } from './broker-action.ts';
import { runOnBroker } from './broker-route.ts';
import { splitArguments } from './call-arguments.ts';
import { auditOutcomeOf, CallAudit, firstErrorCode } from './call-audit.ts';
import { interruptionOf } from './call-interruption.ts';
import type { RouteCall, RunContext, RunResult } from './call-route.ts';
import { runOnHosts } from './hosts-route.ts';
import { redactArguments } from './redact.ts';
import type { RefusalAudit } from './refusal-audit.ts';

export type { RunContext, RunResult } from './call-route.ts';

/** The routes the domains' broker halves declare, by the `runsOn` that names them (their domain's name). */
const ROUTES = new Map(BROKER_DOMAINS.flatMap((broker) => (broker.route ? [[broker.domain.name, broker.route] as const] : [])));

interface ActionRunnerOptions {
  registry: AgentRegistry;
  store: BrokerStore;
  log: Logger;
  /** The broker's cap on every identity's level. */
  operationsLevel: Level;
  /** The tools the operator switched off for everyone. */
  tools: ToolFilter;
  /** Which calls wait for a second identity's approval; undefined when none do. */
  approvals: ApprovalRule | undefined;
  index: FleetIndex;
  metrics: UsageHistory;
  /** The services the broker runs for its domains, which broker actions use. */
  services: BrokerServices;
  brokerActions: readonly BrokerActionHandler[];
  /** Told how every call ended and how long it took (metrics). */
  recorder: CallRecorder;
  /** Where refused calls are audited, at a bounded rate. */
  refusals: RefusalAudit;
  /** Selectors of mutations also match labels agents declare themselves (--mutations-match-agent-labels). */
  mutationsMatchAgentLabels: boolean;
}

/**
 * The path of every tool call after its surface resolved the action: checks
 * level, arguments, targets, grants and confirmation; waits for a second
 * person's approval where the operator asks for one; writes the audit row
 * before anything is sent; sends the call by the action's route (the hosts,
 * the broker's own handler, or the route of the domain it names); completes
 * the audit row.
 * A refusal or failure is thrown as a FleetError, audited first.
 */
export class ActionRunner {
  private readonly handlers: Map<string, BrokerActionHandler>;
  private readonly gate: ApprovalGate | undefined;

  constructor(private readonly options: ActionRunnerOptions) {
    this.handlers = new Map(options.brokerActions.map((handler) => [handler.action.id, handler]));
    this.gate = options.approvals && new ApprovalGate(options.store, options.approvals);
  }

  effectiveLevel(identity: Identity): Level {
    return effectiveLevel(identity, this.options.operationsLevel);
  }

  /** Whether some calls wait for a second person's approval (`--approval-level`, `--approval-tools`). */
  get approvals(): boolean {
    return this.gate !== undefined;
  }

  /** Whether the identity may see the action at all: within its level, able to write if the action writes, and not switched off. */
  allows(identity: Identity, action: Action): boolean {
    return allowsAction(identity, action, this.options.operationsLevel, this.options.tools);
  }

  /**
   * Audits a call of a real action this identity is not shown (an escalation
   * attempt), which every surface answers as an unknown tool, exactly like
   * one that does not exist: MCP and the console write the same refusal row.
   * Resolves once the row is written (or could not be).
   */
  auditHiddenCall(identity: Identity, tool: string, action: Action, args: Record<string, unknown>): Promise<void> {
    const level = this.effectiveLevel(identity);
    return this.options.refusals.record({
      identity: identity.name,
      people: auditPeopleOf(identity),
      tool,
      action: action.id,
      level: action.level,
      arguments: redactArguments(args, action.sensitive),
      errorCode: 'not_found',
      reason:
        action.level > level
          ? `${action.id} is level ${action.level}, above this identity's level ${level}; answered as an unknown tool`
          : !this.options.tools.allows(action) || (identity.tools && !identity.tools.allows(action))
            ? `${action.id} is switched off ${this.options.tools.allows(action) ? 'for this identity' : 'on this broker'}; answered as an unknown tool`
            : `${action.id} changes things and this identity has no write grant; answered as an unknown tool`,
    });
  }

  /** A call of a tool left out because no agent the identity sees serves it: refused, and the refusal audited with why. */
  auditUnservedCall(identity: Identity, tool: string, action: Action, args: Record<string, unknown>, refusal: FleetError): Promise<void> {
    return this.options.refusals.record({
      identity: identity.name,
      tool,
      action: action.id,
      level: action.level,
      arguments: redactArguments(args, action.sensitive),
      errorCode: refusal.code,
      reason: refusal.message,
    });
  }

  get index(): FleetIndex {
    return this.options.index;
  }

  get metrics(): UsageHistory {
    return this.options.metrics;
  }

  get services(): BrokerServices {
    return this.options.services;
  }

  get refusals(): RefusalAudit {
    return this.options.refusals;
  }

  visibleHosts(identity: Identity): Host[] {
    return this.options.registry.list().filter((host) => identity.grants.reachesHost(host.name));
  }

  async run(identity: Identity, action: Action, args: Record<string, unknown>, context: RunContext): Promise<RunResult> {
    const { options } = this;
    const startedMs = performance.now();
    const finished = (outcome: CallOutcome) =>
      options.recorder.callFinished({ tool: context.tool, action, outcome, durationMs: performance.now() - startedMs });
    const audit = new CallAudit({
      store: options.store,
      registry: options.registry,
      refusals: options.refusals,
      log: options.log,
      identity: identity.name,
      people: auditPeopleOf(identity),
      tool: context.tool,
      action,
      args,
    });
    const call: RouteCall = {
      identity,
      action,
      args,
      context,
      callerLevel: this.effectiveLevel(identity),
      begin: async (targets) => {
        // A second person approves the exact targets and arguments before anything is audited as begun or sent.
        if (this.gate && needsApproval(options.approvals, action)) {
          audit.approvedBy = await this.gate.wait({
            callId: audit.id,
            identity,
            tool: context.tool,
            action,
            targets,
            shownArguments: redactArguments(args, action.sensitive),
            args,
            signal: context.signal,
            onWaiting: context.onApproval,
          });
        }
        await audit.begin(targets);
        if (audit.begun && audit.auditId) context.onAudited?.(audit.auditId);
      },
      late: audit.late,
      auditId: audit.auditId,
    };
    try {
      if (!this.allows(identity, action)) throw new FleetError('not_found', `unknown tool: ${context.tool}`);
      const result = await this.route(call);
      // Cancelled as its broker stopped: what the hosts answered (cancelled) is not how the call went.
      const interruption = interruptionOf(context.signal);
      if (interruption) throw interruption;
      const outcome = auditOutcomeOf(result);
      const answered = answerAudit(result);
      await audit.complete(outcome, firstErrorCode(result), answered.note);
      await audit.refusedOnHosts(answered.refusals);
      finished(outcome);
      return result;
    } catch (error) {
      const failure = toFleetError(error);
      const outcome = context.signal.aborted ? 'cancelled' : audit.begun ? 'error' : 'refused';
      if (outcome === 'refused') await audit.refused(failure);
      // Cancelled as its broker stopped, a change may have been made: the audit says its outcome is unknown.
      else await audit.complete(interruptionOf(context.signal) ? 'interrupted' : outcome, failure.code);
      finished(outcome);
      if (failure.code === 'internal') options.log.error('tool call failed', { tool: context.tool, error: failure.message });
      throw failure;
    }
  }

  private route(call: RouteCall): Promise<RunResult> {
    const { options } = this;
    const deps = { registry: options.registry, index: options.index, log: options.log };
    if (call.action.runsOn === 'host') {
      return runOnHosts(call, {
        ...deps,
        mutationsMatchAgentLabels: options.mutationsMatchAgentLabels,
        visibleHosts: () => this.visibleHosts(call.identity),
        allows: (action) => this.allows(call.identity, action),
      });
    }
    if (call.action.runsOn === 'broker') return runOnBroker(call, this.handlers.get(call.action.id), this.brokerContext(call));
    const route = ROUTES.get(call.action.runsOn);
    if (!route) throw new FleetError('unsupported', `no domain of this broker routes ${call.action.id} (runs on ${call.action.runsOn})`);
    return route.run(call, deps);
  }

  private brokerContext(call: RouteCall): BrokerActionContext {
    const { options } = this;
    return {
      identity: call.identity,
      registry: options.registry,
      store: options.store,
      index: options.index,
      metrics: options.metrics,
      services: options.services,
      log: options.log,
      signal: call.context.signal,
      visibleHosts: () => this.visibleHosts(call.identity),
      authority: { identityId: call.identity.id, actionId: call.action.id, confirmed: splitArguments(call.action, call.args).confirm },
      auditId: call.auditId,
    };
  }
}
