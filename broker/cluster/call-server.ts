import type { Msg } from '@nats-io/transport-node';
import { errorInfo } from '../../shared/errors/fleet-error.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import { fanOut } from '../fanout/fan-out.ts';
import type { Bus, BusSubscription } from './bus.ts';
import { brokerMessage, type CallReply, type CallRequestMessage, callRequest, SUBJECTS } from './bus-messages.ts';

/**
 * Serves calls other brokers send for agents whose streams this broker holds:
 * on its own subject (several agents at once) and on each held agent's subject
 * (one agent). Only agents held here are called, so a call never travels
 * further; one that moved away gets `agent_offline`, and the caller asks again.
 */
export class CallServer {
  private readonly agentBusSubscriptions = new Map<string, BusSubscription>();
  private brokerBusSubscription: BusSubscription | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly registry: AgentRegistry,
    private readonly selfId: string,
  ) {}

  start(): void {
    this.brokerBusSubscription = this.bus.subscribe(SUBJECTS.brokerCalls(this.selfId), callRequest, (request, raw) => this.serve(request, raw));
    this.sync();
  }

  stop(): void {
    this.brokerBusSubscription?.unsubscribe();
    for (const subscription of this.agentBusSubscriptions.values()) subscription.unsubscribe();
    this.agentBusSubscriptions.clear();
  }

  /** Listens on the subject of every agent held here, and on no other. */
  sync(): void {
    const held = new Set(this.registry.held().map((host) => host.id));
    for (const [agentId, subscription] of this.agentBusSubscriptions) {
      if (held.has(agentId)) continue;
      subscription.unsubscribe();
      this.agentBusSubscriptions.delete(agentId);
    }
    for (const agentId of held) {
      if (this.agentBusSubscriptions.has(agentId)) continue;
      this.agentBusSubscriptions.set(
        agentId,
        this.bus.subscribe(SUBJECTS.agentCalls(agentId), callRequest, (request, raw) => this.serve(request, raw)),
      );
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
    }).finally(() => cancel.unsubscribe());
  }
}
