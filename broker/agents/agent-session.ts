import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { type ErrorInfo, errorInfo } from '../../shared/errors/fleet-error.ts';
import { type BrokerFrame, BrokerFrameSchema, type Call, CallSchema, CancelSchema, type Chunk, type Result } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import type { OutgoingStatus } from '../../shared/grpc/grpc-status.ts';

export interface CallRequest {
  action: string;
  params: unknown;
  /** `params` already encoded as JSON: a fan-out encodes them once for every host. */
  paramsJson?: Uint8Array;
  /**
   * The Call frame to send, built once by a fan-out for all its hosts (callFrame):
   * one call id, and one protobuf encoding of it however many streams it goes down.
   */
  frame?: BrokerFrame;
  deadlineUnixMs: number;
  caller: string;
  /** The caller's effective operations level, for actions whose rules depend on it. */
  callerLevel?: number;
  /** Streamed pieces of the result, in order, before the final answer. */
  onChunk?: (payload: unknown, seq: number) => void;
  /** Aborting sends Cancel to the agent and settles the call at once. */
  signal?: AbortSignal;
  /**
   * The agent's answer when it comes after the call settled by its deadline or
   * cancellation: a change already under way finishes anyway, and its outcome
   * is still worth recording.
   */
  onLate?: (outcome: CallOutcome) => void;
  /** The call's audit row, when it has one: a broker of a cluster holding the agent notes a late answer there. */
  auditId?: string;
  /**
   * Who asks (the identity's id) and whether they confirmed a destructive
   * call: a broker of a cluster that runs the call for another authorises it
   * again from these (cluster/relay-authorization.ts).
   */
  authority?: CallAuthority;
}

/** What a call carries to be authorised again by a broker that runs it for another. */
export interface CallAuthority {
  identityId: string;
  /** The catalog action the identity called: the agent's action itself, or a broker action that sends it (`sends`). */
  actionId: string;
  confirmed: boolean;
}

/** What one agent answered: its result, or why there is none. */
export type CallOutcome =
  | { ok: true; payload: unknown; failedCollectors: string[]; errors: ErrorInfo[]; absentCollectors?: string[] }
  | { ok: false; error: ErrorInfo };

interface PendingCall {
  request: CallRequest;
  settle: (outcome: CallOutcome) => void;
}

type BrokerFrameBody = BrokerFrame['frame'];

/** What a session writes its frames to: the agent's gRPC stream (or, in tests, an in-memory link to a dispatcher). */
export interface BrokerFrameStream {
  write(frame: BrokerFrame): unknown;
  end(): unknown;
  emit(event: 'error', status: Partial<OutgoingStatus>): unknown;
}

/** How long an answer is still taken after its call gave up on it. */
const LATE_ANSWER_WINDOW_MS = 10 * 60_000;

const textDecoder = new TextDecoder();
const textEncoder = new TextEncoder();

export function encodeParams(params: unknown): Uint8Array {
  return textEncoder.encode(JSON.stringify(params ?? {}));
}

/**
 * The Call frame of a request. A fan-out builds one for all its hosts: call ids
 * need only be unique within a stream, and a message object written to many
 * streams is encoded once (shared/grpc/service-adapter.ts), which was a tenth of
 * the broker's CPU in a fan-out round (docs/performance.md).
 */
export function callFrame(request: CallRequest): BrokerFrame {
  return create(BrokerFrameSchema, {
    frame: {
      case: 'call',
      value: create(CallSchema, {
        callId: randomUUID(),
        action: request.action,
        paramsJson: request.paramsJson ?? encodeParams(request.params),
        deadlineUnixMs: BigInt(request.deadlineUnixMs),
        caller: request.caller,
        callerLevel: request.callerLevel ?? 0,
      }),
    },
  });
}

function parsePayload(bytes: Uint8Array): unknown {
  return bytes.length === 0 ? null : JSON.parse(textDecoder.decode(bytes));
}

function toOutcome(result: Result): CallOutcome {
  let payload: unknown;
  try {
    payload = parsePayload(result.payloadJson);
  } catch (error) {
    return { ok: false, error: errorInfo('internal', `the agent sent a result that is not JSON: ${(error as Error).message}`) };
  }
  return {
    ok: true,
    payload,
    failedCollectors: [...result.failedCollectors],
    ...(result.absentCollectors.length ? { absentCollectors: [...result.absentCollectors] } : {}),
    errors: result.errors.map((e) => errorInfo(e.code, e.message, e.hint, e.collector ? { collector: e.collector } : {})),
  };
}

/**
 * The agent gave up at the call's deadline: the same outcome as the broker's
 * own timer for that deadline. Both timers aim at one instant, and the agent's
 * may fire first (another process, a busy loop, a clock a little ahead); its
 * answer must not turn a missed deadline into a successful call.
 */
function deadlineAnswer(result: Result): CallOutcome | undefined {
  const [error] = result.errors;
  if (result.errors.length !== 1 || error?.code !== 'deadline_exceeded' || error.collector) return undefined;
  if (result.payloadJson.length > 8 || !['', 'null'].includes(textDecoder.decode(result.payloadJson))) return undefined;
  return { ok: false, error: errorInfo('deadline_exceeded', `the agent stopped at the call's deadline: ${error.message}`, error.hint) };
}

/**
 * What a host's calls go through: the agent's own stream on this broker
 * (AgentSession), or, in a cluster, the broker that holds that stream
 * (broker/cluster/remote-session.ts).
 */
export interface HostSession {
  readonly isOpen: boolean;
  readonly inFlight: number;
  readonly connectedAt: number;
  /** The broker holding the agent's stream when it is not this one. */
  readonly heldBy?: string;
  call(request: CallRequest): Promise<CallOutcome>;
  close(status?: Partial<OutgoingStatus>): void;
}

/**
 * One live Connect stream of one agent: sends calls down it, matches results
 * and chunks coming up to the calls waiting for them, and settles every call
 * exactly once, by its result, its deadline, its cancellation or the stream's end.
 */
export class AgentSession implements HostSession {
  readonly sessionId = randomUUID();
  readonly connectedAt = Date.now();
  private readonly pending = new Map<string, PendingCall>();
  /** Calls settled without an answer whose caller still wants to hear how they ended. */
  private readonly late = new Map<string, { onLate: (outcome: CallOutcome) => void; timer: NodeJS.Timeout }>();
  private ended = false;

  /** The pins of the CAs the agent said it trusts (its Hello), so it is told of a new bundle only when it differs. */
  trustedCaPins: readonly string[] = [];

  /** The pin of the CA of the newest certificate the agent holds: the stream's, until a renewal over it. */
  caPin: string;

  constructor(
    private readonly stream: BrokerFrameStream,
    readonly agentId: string,
    readonly certSerial: string,
    /** The pin of the CA that issued the certificate the stream was opened with. */
    readonly streamCaPin = '',
  ) {
    this.caPin = streamCaPin;
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  send(frame: BrokerFrameBody): boolean {
    return this.write(create(BrokerFrameSchema, { frame }));
  }

  private write(frame: BrokerFrame): boolean {
    if (this.ended) return false;
    this.stream.write(frame);
    return true;
  }

  /**
   * The broker is shutting down and this agent moves to another one: calls in
   * flight finish, and a new call is refused at once, to be sent again through
   * the broker the agent moves to.
   */
  draining = false;

  call(request: CallRequest): Promise<CallOutcome> {
    return new Promise<CallOutcome>((resolve) => {
      if (this.draining && !this.ended) {
        resolve({
          ok: false,
          error: errorInfo(
            'agent_disconnected',
            'the broker holding this agent is shutting down; the agent moves to another broker',
            'Call again in a few seconds: the agent reconnects to another broker (list_agents shows when).',
          ),
        });
        return;
      }
      if (this.ended) {
        resolve({
          ok: false,
          error: errorInfo(
            'agent_disconnected',
            'the agent disconnected before the call could be sent',
            'Retry once the agent is online again (list_agents shows its state).',
          ),
        });
        return;
      }
      const shared = request.frame?.frame.case === 'call' ? request.frame : undefined;
      // A shared frame's id is new to this stream unless the same host was targeted twice: then it gets its own.
      const frame = shared && !this.pending.has((shared.frame.value as Call).callId) ? shared : callFrame(request);
      const callId = (frame.frame.value as Call).callId;
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        this.cancel(callId, 'cancelled by the caller');
        this.awaitLate(callId, request);
        settle({ ok: false, error: errorInfo('cancelled', 'the call was cancelled by the caller before the agent answered', '') });
      };
      const settle = (outcome: CallOutcome) => {
        if (!this.pending.delete(callId)) return;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      this.pending.set(callId, { request, settle });
      const remainingMs = Math.max(0, request.deadlineUnixMs - Date.now());
      // After the loop was held (a long collection, a burst of work), expired timers run before what the
      // sockets brought in meanwhile: the deadline waits one turn of the loop, so an answer already
      // received is read before the call is given up.
      const expire = () => {
        this.cancel(callId, 'deadline exceeded');
        this.awaitLate(callId, request);
        settle({
          ok: false,
          error: errorInfo(
            'deadline_exceeded',
            `the agent did not answer within ${remainingMs} ms`,
            'Raise timeout_ms (up to 60000) or check the host with agent_info.',
          ),
        });
      };
      timer = setTimeout(() => setImmediate(expire), remainingMs);
      if (request.signal?.aborted) {
        onAbort();
        return;
      }
      request.signal?.addEventListener('abort', onAbort, { once: true });
      this.write(frame);
    });
  }

  private cancel(callId: string, reason: string): void {
    if (this.pending.has(callId)) this.send({ case: 'cancel', value: create(CancelSchema, { callId, reason }) });
  }

  private awaitLate(callId: string, request: CallRequest): void {
    if (!request.onLate || !this.pending.has(callId)) return;
    const timer = setTimeout(() => this.late.delete(callId), LATE_ANSWER_WINDOW_MS);
    timer.unref();
    this.late.set(callId, { onLate: request.onLate, timer });
  }

  onResult(result: Result): void {
    const pending = this.pending.get(result.callId);
    if (pending) {
      pending.settle(deadlineAnswer(result) ?? toOutcome(result));
      return;
    }
    // Settled already (deadline or cancel): the answer goes to whoever still wants it, or is dropped.
    const late = this.late.get(result.callId);
    if (!late) return;
    this.late.delete(result.callId);
    clearTimeout(late.timer);
    late.onLate(toOutcome(result));
  }

  onChunk(chunk: Chunk): void {
    const pending = this.pending.get(chunk.callId);
    if (!pending?.request.onChunk) return;
    let payload: unknown;
    try {
      payload = parsePayload(chunk.payloadJson);
    } catch {
      // A chunk that is not JSON is dropped; the final result still settles the call.
      return;
    }
    // Outside the try: an exception of the receiver's is its own, not a bad chunk.
    pending.request.onChunk(payload, chunk.seq);
  }

  /** Ends the stream (with an error status when given) and fails every call still waiting. */
  close(status?: Partial<OutgoingStatus>): void {
    if (this.ended) return;
    this.markEnded();
    try {
      if (status) this.stream.emit('error', status);
      else this.stream.end();
    } catch {
      // The stream may already be gone underneath us.
    }
  }

  /** The stream went away from the agent's side. */
  markEnded(): void {
    if (this.ended) return;
    this.ended = true;
    for (const late of this.late.values()) clearTimeout(late.timer);
    this.late.clear();
    for (const pending of [...this.pending.values()]) {
      pending.settle({
        ok: false,
        error: errorInfo(
          'agent_disconnected',
          'the agent disconnected before it answered',
          'Retry once the agent is online again (list_agents shows its state).',
        ),
      });
    }
  }
}
