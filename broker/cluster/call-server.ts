import type { Msg } from '@nats-io/transport-node';
import { errorInfo } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import { lateNote } from '../calls/call-audit.ts';
import { fanOut, type HostOutcome } from '../fanout/fan-out.ts';
import type { AuditTable } from '../store/audit-table.ts';
import type { Bus, BusSubscription } from './bus.ts';
import { brokerMessage, type CallReply, type CallRequestMessage, callRequest, SUBJECTS } from './bus-messages.ts';

/**
 * Serves calls other brokers send for agents whose streams this broker holds:
 * on its own subject (several agents at once) and on each held agent's subject
 * (one agent). Only agents held here are called, so a call never travels
 * further; one that moved away gets `agent_offline`, and the caller asks again.
 */
export class CallServer {
  private readonly agentSubscriptions = new Map<string, BusSubscription>();
  private brokerSubscription: BusSubscription | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly registry: AgentRegistry,
    private readonly audit: Pick<AuditTable, 'noteLate'>,
    private readonly selfId: string,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.brokerSubscription = this.bus.subscribe(SUBJECTS.brokerCalls(this.selfId), callRequest, (request, raw) => this.serve(request, raw));
    for (const host of this.registry.held()) this.follow(host.id, true);
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
        this.bus.subscribe(SUBJECTS.agentCalls(agentId), callRequest, (request, raw) => this.serve(request, raw)),
      );
    } else if (!heldHere && subscription) {
      subscription.unsubscribe();
      this.agentSubscriptions.delete(agentId);
    }
  }

  private serve(request: CallRequestMessage, raw: Msg): void {
    const reply = raw.reply;
    if (!reply) return;
    const send = (message: CallReply) => this.bus.publish(reply, message);
    const local: Host[] = [];
    for (const agentId of request.agents) {
      const host = this.registry.get(agentId);
      if (host?.session && host.session.heldBy === undefined) {
        local.push(host);
        continue;
      }
      send({
        t: 'outcome',
        agent: agentId,
        outcome: {
          ok: false,
          error: errorInfo(
            'agent_offline',
            `agent ${host?.name ?? agentId} is no longer connected to broker ${this.selfId}`,
            'Call again; list_agents shows where it is now.',
          ),
        },
      });
    }
    if (local.length === 0) return;
    const controller = new AbortController();
    const cancel = this.bus.subscribe(SUBJECTS.cancel(request.requestId), brokerMessage, () => controller.abort());
    void fanOut(local, {
      action: request.action,
      params: request.params,
      timeoutMs: request.timeoutMs,
      caller: request.caller,
      ...(request.callerLevel !== undefined ? { callerLevel: request.callerLevel } : {}),
      signal: controller.signal,
      ...(request.streamChunks ? { onChunk: (host: Host, payload: unknown, seq: number) => send({ t: 'chunk', agent: host.id, seq, payload }) } : {}),
      onHostDone: ({ host, outcome }) => send({ t: 'outcome', agent: host.id, outcome }),
      ...(request.auditId ? { onLate: (late: HostOutcome) => this.noteLate(request, late) } : {}),
    }).finally(() => cancel.unsubscribe());
  }

  /**
   * An agent here answered after the calling broker gave up on it: the answer
   * is noted in the call's audit row from here, since the calling broker
   * never hears it (and may be gone).
   */
  private noteLate(request: CallRequestMessage, late: HostOutcome): void {
    const error = late.outcome.ok ? late.outcome.errors[0] : late.outcome.error;
    const note = `${lateNote(late.host.name, error?.code, late.durationMs, request.timeoutMs)} (on broker ${this.selfId})`;
    this.audit.noteLate(request.auditId as string, note).catch((error: unknown) => {
      this.log.warn('could not note a late answer in the audit', { call_id: request.auditId, error: (error as Error).message });
    });
  }
}
