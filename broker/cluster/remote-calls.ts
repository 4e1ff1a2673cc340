import { randomUUID } from 'node:crypto';
import { errorInfo } from '../../shared/errors/fleet-error.ts';
import type { CallOutcome, CallRequest } from '../agents/agent-session.ts';
import type { Bus, BusSubscription } from './bus.ts';
import { type CallRequestMessage, callReply, SUBJECTS } from './bus-messages.ts';

interface Waiting {
  agentId: string;
  request: CallRequest;
  resolve: (outcome: CallOutcome) => void;
}

interface InFlight {
  brokerId: string;
  settle: (agentId: string, outcome: CallOutcome) => void;
  failAll: (outcome: (agentId: string) => CallOutcome) => void;
}

/**
 * The part of a call's time given to the broker holding the agent: it answers
 * `deadline_exceeded` itself just before our own deadline, which is then left
 * for a broker that died or a bus that dropped the answer.
 */
function remoteTimeoutMs(remainingMs: number): number {
  return Math.max(0, remainingMs - Math.min(250, Math.floor(remainingMs / 10)));
}

/**
 * Calls for agents whose streams other brokers hold. Calls made in the same
 * tick with the same action, parameters, deadline and caller (one fan-out)
 * travel as one request per holding broker; a lone call goes to the agent's
 * own subject, where NATS "no responders" means no broker holds it. Chunks and
 * outcomes come back on the request's inbox (the outcomes of a request for
 * several agents in batches); cancellation and the deadline travel with the
 * request.
 */
export class RemoteCalls {
  private queued = new Map<string, Waiting[]>();
  private flushScheduled = false;
  private readonly inFlight = new Set<InFlight>();
  private readonly inFlightPerAgent = new Map<string, number>();

  constructor(
    private readonly bus: Pick<Bus, 'connected' | 'publish' | 'publishSealed' | 'replies' | 'inbox' | 'knows' | 'refuse'>,
    private readonly selfId: string,
    /** The other brokers alive now: a call sent to an agent's subject is sealed to all of them, as any may hold it by then. */
    private readonly otherBrokers: () => readonly string[],
  ) {}

  inFlightFor(agentId: string): number {
    return this.inFlightPerAgent.get(agentId) ?? 0;
  }

  call(brokerId: string, agentId: string, request: CallRequest): Promise<CallOutcome> {
    if (!this.bus.connected) {
      return Promise.resolve({
        ok: false,
        error: errorInfo(
          'unavailable',
          `the broker cluster's bus is down, and agent ${agentId} is held by broker ${brokerId}`,
          'Call again in a few seconds; agents held by this broker still answer.',
        ),
      });
    }
    if (!request.authority) {
      return Promise.resolve({
        ok: false,
        error: errorInfo(
          'forbidden',
          `agent ${agentId} is held by broker ${brokerId}, and a call that names no identity is not relayed`,
          'Call it through a tool.',
        ),
      });
    }
    if (!this.bus.knows(brokerId)) {
      return Promise.resolve({
        ok: false,
        error: errorInfo('unavailable', `broker ${brokerId}, which holds agent ${agentId}, has not been heard on the bus yet`, 'Call again in a few seconds.'),
      });
    }
    return new Promise((resolve) => {
      const list = this.queued.get(brokerId) ?? [];
      list.push({ agentId, request, resolve });
      this.queued.set(brokerId, list);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  /** A broker stopped answering (or left): every call waiting on it settles now. */
  brokerGone(brokerId: string): void {
    for (const flight of this.inFlight) {
      if (flight.brokerId !== brokerId) continue;
      flight.failAll((agentId) => ({
        ok: false,
        error: errorInfo(
          'agent_disconnected',
          `broker ${brokerId}, which held agent ${agentId}, left the cluster before it answered`,
          'Call again; the agent reconnects to another broker (list_agents shows when).',
        ),
      }));
    }
  }

  /** The bus dropped: calls in flight elsewhere cannot come back. */
  busLost(): void {
    for (const flight of this.inFlight) {
      flight.failAll(() => ({
        ok: false,
        error: errorInfo('unavailable', 'the broker cluster lost its bus while the call was in flight', 'Call again in a few seconds.'),
      }));
    }
  }

  private flush(): void {
    this.flushScheduled = false;
    const queued = this.queued;
    this.queued = new Map();
    for (const [brokerId, waiting] of queued) {
      const groups: Waiting[][] = [];
      for (const item of waiting) {
        const group = groups.find((g) => sameCall(g[0]?.request, item.request));
        if (group) group.push(item);
        else groups.push([item]);
      }
      for (const group of groups) this.send(brokerId, group);
    }
  }

  private send(brokerId: string, group: Waiting[]): void {
    const first = group[0] as Waiting;
    const { request } = first;
    const pending = new Map(group.map((item) => [item.agentId, item]));
    const requestId = randomUUID();
    const inbox = this.bus.inbox();
    const toAgent = group.length === 1;
    let subscription: BusSubscription | undefined;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      this.bus.publish(SUBJECTS.cancel(requestId), { broker: this.selfId });
      flight.failAll(() => ({ ok: false, error: errorInfo('cancelled', 'the call was cancelled by the caller before the agent answered', '') }));
    };
    const flight: InFlight = {
      brokerId,
      settle: (agentId, outcome) => {
        const item = pending.get(agentId);
        if (!item) return;
        pending.delete(agentId);
        this.count(agentId, -1);
        item.resolve(outcome);
        if (pending.size === 0) {
          clearTimeout(timer);
          subscription?.unsubscribe();
          request.signal?.removeEventListener('abort', onAbort);
          this.inFlight.delete(flight);
        }
      },
      failAll: (outcome) => {
        for (const agentId of [...pending.keys()]) flight.settle(agentId, outcome(agentId));
      },
    };
    for (const item of group) this.count(item.agentId, 1);
    this.inFlight.add(flight);
    subscription = this.bus.replies(inbox, callReply, (raw) => {
      if (raw === 'no_responders') {
        flight.failAll((agentId) =>
          toAgent
            ? {
                ok: false,
                error: errorInfo('agent_offline', `agent ${agentId} is connected to no broker of the cluster`, 'list_agents shows when it is back.'),
              }
            : {
                ok: false,
                error: errorInfo(
                  'agent_disconnected',
                  `broker ${brokerId}, which held agent ${agentId}, is not answering`,
                  'Call again; the agent reconnects to another broker (list_agents shows when).',
                ),
              },
        );
        return;
      }
      // A call for several agents is answered by the broker it was sent to; one for an agent's subject by whichever holds it.
      if (!toAgent && raw.sender !== brokerId) {
        this.bus.refuse('wrong_sender', { subject: inbox, sender: raw.sender, why: `the call went to broker ${brokerId}` });
        return;
      }
      const reply = raw.message;
      if (reply.t === 'chunk') pending.get(reply.agent)?.request.onChunk?.(reply.payload, reply.seq);
      else if (reply.t === 'outcome') flight.settle(reply.agent, reply.outcome as CallOutcome);
      else for (const { agent, outcome } of reply.outcomes) flight.settle(agent, outcome as CallOutcome);
    });
    const remainingMs = Math.max(0, request.deadlineUnixMs - Date.now());
    timer = setTimeout(() => {
      this.bus.publish(SUBJECTS.cancel(requestId), { broker: this.selfId });
      flight.failAll((agentId) => ({
        ok: false,
        error: errorInfo(
          'deadline_exceeded',
          `broker ${brokerId}, which holds agent ${agentId}, did not answer within ${remainingMs} ms`,
          'Call again; list_agents shows whether the agent moved to another broker.',
        ),
      }));
    }, remainingMs);
    if (request.signal?.aborted) {
      onAbort();
      return;
    }
    request.signal?.addEventListener('abort', onAbort, { once: true });
    const message: CallRequestMessage = {
      requestId,
      from: this.selfId,
      agents: [...pending.keys()],
      action: request.action,
      params: request.params ?? {},
      timeoutMs: remoteTimeoutMs(remainingMs),
      caller: request.caller,
      authority: request.authority as NonNullable<CallRequest['authority']>,
      streamChunks: request.onChunk !== undefined,
      ...(toAgent ? {} : { batchOutcomes: true as const }),
      ...(request.auditId ? { auditId: request.auditId } : {}),
    };
    // Sealed: parameters may hold secrets (create_secret's data) that no one else on the bus may read.
    if (toAgent) {
      const recipients = [brokerId, ...this.otherBrokers().filter((other) => other !== brokerId)];
      this.bus.publishSealed(SUBJECTS.agentCalls(first.agentId), message, recipients, { reply: inbox, sign: true });
    } else {
      this.bus.publishSealed(SUBJECTS.brokerCalls(brokerId), message, [brokerId], { reply: inbox, sign: true });
    }
  }

  private count(agentId: string, delta: number): void {
    const next = (this.inFlightPerAgent.get(agentId) ?? 0) + delta;
    if (next <= 0) this.inFlightPerAgent.delete(agentId);
    else this.inFlightPerAgent.set(agentId, next);
  }
}

/** Parts of one fan-out: the same parameters object, deadline, caller and cancellation. */
function sameCall(a: CallRequest | undefined, b: CallRequest): boolean {
  return (
    a !== undefined &&
    a.action === b.action &&
    a.params === b.params &&
    a.deadlineUnixMs === b.deadlineUnixMs &&
    a.caller === b.caller &&
    a.signal === b.signal &&
    a.callerLevel === b.callerLevel &&
    a.authority === b.authority &&
    a.auditId === b.auditId &&
    (a.onChunk === undefined) === (b.onChunk === undefined)
  );
}
