import type { Msg } from '@nats-io/transport-node';
import { errorInfo, type FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { CallOutcome } from '../agents/agent-session.ts';
import { lateNote } from '../calls/call-audit.ts';
import type { RefusalAudit } from '../calls/refusal-audit.ts';
import { fanOut, type HostOutcome } from '../fanout/fan-out.ts';
import type { AuditTable } from '../store/audit-table.ts';
import type { Bus, BusMessage, BusSubscription } from './bus.ts';
import { BusBatches } from './bus-batches.ts';
import { brokerMessage, type CallReply, type CallRequestMessage, callRequest, SUBJECTS } from './bus-messages.ts';
import { authorizeRelayedCall, type RelayAuthorizationDeps } from './relay-authorization.ts';

export interface CallServerOptions {
  bus: Pick<Bus, 'subscribe' | 'publishSealed' | 'publishSealedJson' | 'refuse'>;
  registry: AgentRegistry;
  /** What a relayed call is authorised against again here. */
  relay: RelayAuthorizationDeps;
  audit: Pick<AuditTable, 'noteLate'>;
  /** Where a relayed call refused here is audited, as a refusal at the MCP edge is. */
  refusals: Pick<RefusalAudit, 'record'>;
  log: Logger;
}

/**
 * Serves calls other brokers send for agents whose streams this broker holds:
 * on its own subject (several agents at once) and on each held agent's subject
 * (one agent). Only agents held here are called, so a call never travels
 * further; one that moved away gets `agent_offline`, and the caller asks
 * again. Each call is authorised again here from the store (the identity, its
 * grants, the audit row of a change) before any agent hears of it, and its
 * answers are sealed to the broker that asked.
 */
/** Answers one agent of a relayed call. */
type Answer = (agent: string, outcome: CallOutcome) => void;

/** How long an outcome of a call for several agents waits for others to go back with it. */
const OUTCOME_BATCH_MS = 20;

export class CallServer {
  private readonly agentSubscriptions = new Map<string, BusSubscription>();
  private brokerSubscription: BusSubscription | undefined;

  constructor(private readonly options: CallServerOptions) {}

  private get selfId(): string {
    return this.options.relay.selfId;
  }

  start(): void {
    this.brokerSubscription = this.options.bus.subscribe(SUBJECTS.brokerCalls(this.selfId), callRequest, (request, raw) => void this.serve(request, raw));
    for (const host of this.options.registry.held()) this.follow(host.id, true);
  }

  stop(): void {
    this.brokerSubscription?.unsubscribe();
    for (const subscription of this.agentSubscriptions.values()) subscription.unsubscribe();
    this.agentSubscriptions.clear();
  }

  /** Listens on an agent's subject while its stream is held here, and not once it is not. */
  follow(agentId: string, heldHere: boolean): void {
    const subscription = this.agentSubscriptions.get(agentId);
    if (heldHere && !subscription) {
      this.agentSubscriptions.set(
        agentId,
        this.options.bus.subscribe(SUBJECTS.agentCalls(agentId), callRequest, (request, raw) => void this.serve(request, raw)),
      );
    } else if (!heldHere && subscription) {
      subscription.unsubscribe();
      this.agentSubscriptions.delete(agentId);
    }
  }

  private async serve({ sender, message: request }: BusMessage<CallRequestMessage>, raw: Msg): Promise<void> {
    const { bus } = this.options;
    const reply = raw.reply;
    if (!reply) return;
    if (request.from !== sender) {
      bus.refuse('wrong_sender', { subject: raw.subject, sender, why: `it sent a call as broker ${request.from}` });
      return;
    }
    const receivedAt = Date.now();
    const send = (message: CallReply) => bus.publishSealed(reply, message, [sender]);
    // A call for several agents answers in batches when the asking broker reads them: at 15,000 agents, one sealed
    // message per outcome held the asking broker's loop long enough for the bus to cut it off as a slow consumer.
    const batches =
      request.batchOutcomes && request.agents.length > 1
        ? new BusBatches<{ agent: string; outcome: CallOutcome }>(
            { t: 'outcomes' },
            'outcomes',
            (json) => bus.publishSealedJson(reply, json, [sender]),
            OUTCOME_BATCH_MS,
          )
        : undefined;
    const answer: Answer = (agent, outcome) => (batches ? batches.add({ agent, outcome }) : send({ t: 'outcome', agent, outcome }));
    try {
      await this.serveHere(request, sender, receivedAt, send, answer);
    } finally {
      batches?.flush();
    }
  }

  private async serveHere(request: CallRequestMessage, sender: string, receivedAt: number, send: (message: CallReply) => void, answer: Answer): Promise<void> {
    const { bus, registry } = this.options;
    const local: Host[] = [];
    for (const agentId of request.agents) {
      const host = registry.get(agentId);
      if (host?.session && host.session.heldBy === undefined) {
        local.push(host);
        continue;
      }
      answer(agentId, {
        ok: false,
        error: errorInfo(
          'agent_offline',
          `agent ${host?.name ?? agentId} is no longer connected to broker ${this.selfId}`,
          'Call again; list_agents shows where it is now.',
        ),
      });
    }
    if (local.length === 0) return;
    const controller = new AbortController();
    // Before anything is awaited: a cancellation sent while the call is authorised still counts.
    const cancel = bus.subscribe(SUBJECTS.cancel(request.requestId), brokerMessage, (cancelled) => {
      if (cancelled.sender === sender) controller.abort();
    });
    try {
      let relayed: Awaited<ReturnType<typeof authorizeRelayedCall>>;
      try {
        relayed = await authorizeRelayedCall(this.options.relay, request, sender, local);
      } catch (error) {
        await this.refuse(request, sender, local, toFleetError(error), answer);
        return;
      }
      if (controller.signal.aborted) return;
      await fanOut(local, {
        action: request.action,
        params: request.params,
        timeoutMs: Math.max(0, request.timeoutMs - (Date.now() - receivedAt)),
        caller: relayed.identity.name,
        callerLevel: relayed.callerLevel,
        signal: controller.signal,
        ...(request.streamChunks ? { onChunk: (host: Host, payload: unknown, seq: number) => send({ t: 'chunk', agent: host.id, seq, payload }) } : {}),
        onHostDone: ({ host, outcome }) => answer(host.id, outcome),
        ...(request.auditId ? { onLate: (late: HostOutcome) => this.noteLate(request, late) } : {}),
      });
    } finally {
      cancel.unsubscribe();
    }
  }

  /** Audits a call refused here as the MCP edge audits one, then answers every agent of it with the refusal. */
  private async refuse(request: CallRequestMessage, sender: string, hosts: Host[], failure: FleetError, answer: Answer): Promise<void> {
    this.options.log.warn('a call relayed by another broker was refused', { broker: sender, action: request.action, reason: failure.message });
    await this.options.refusals
      .record({
        identity: request.caller,
        source: `broker ${sender}`,
        tool: request.authority.actionId,
        action: request.action,
        targets: hosts.map((host) => host.name),
        targetIds: hosts.map((host) => host.id),
        errorCode: failure.code,
        reason: `relayed by broker ${sender} and refused on broker ${this.selfId}: ${failure.message}`.slice(0, 500),
      })
      .catch(() => {});
    const error = errorInfo(failure.code, failure.message, failure.hint);
    for (const host of hosts) answer(host.id, { ok: false, error });
  }

  /**
   * An agent here answered after the calling broker gave up on it: the answer
   * is noted in the call's audit row from here, since the calling broker
   * never hears it (and may be gone).
   */
  private noteLate(request: CallRequestMessage, late: HostOutcome): void {
    const error = late.outcome.ok ? late.outcome.errors[0] : late.outcome.error;
    const note = `${lateNote(late.host.name, error?.code, late.durationMs, request.timeoutMs)} (on broker ${this.selfId})`;
    this.options.audit.noteLate(request.auditId as string, note).catch((error: unknown) => {
      this.options.log.warn('could not note a late answer in the audit', { call_id: request.auditId, error: (error as Error).message });
    });
  }
}
