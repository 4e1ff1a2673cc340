import type { Action, ActionInput } from '../../shared/catalog/action.ts';
import { loadAction } from '../../shared/domains/domain-heads.ts';
import { type ErrorInfo, FleetError, toFleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { MAX_MESSAGE_BYTES } from '../../shared/version.ts';

/** What a handler gets besides its parameters. */
export interface CallContext {
  callId: string;
  caller: string;
  /** The caller's effective operations level (0-3). */
  callerLevel: number;
  /** Aborted when the broker cancels the call or its deadline passes. */
  signal: AbortSignal;
  /** The call's deadline on this host's clock. */
  deadlineUnixMs: number;
  /** Streams one piece of the result to the broker before the final answer. */
  emit(payload: unknown): void;
  log: Logger;
}

/** A handler's answer: its payload, the parts of it that could not be collected, and those with nothing to collect on this host. */
export interface HandlerResult {
  payload: unknown;
  failedCollectors?: string[];
  errors?: ErrorInfo[];
  /** Collectors absent here (no engine, no swarm, not configured): their part is empty, and no error says so. */
  absentCollectors?: string[];
}

export type ActionHandler<A extends Action = Action> = (params: ActionInput<A>, context: CallContext) => Promise<HandlerResult>;

export interface IncomingCall {
  callId: string;
  action: string;
  paramsJson: Uint8Array;
  /** Already corrected for the skew between broker and agent clocks. */
  deadlineUnixMs: number;
  caller: string;
  callerLevel: number;
}

export interface ResultSink {
  chunk(callId: string, seq: number, payloadJson: Uint8Array): void;
  result(callId: string, payloadJson: Uint8Array, failedCollectors: string[], errors: ErrorInfo[], absentCollectors?: string[]): void;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Room left in a frame for everything but the payload. */
const MAX_PAYLOAD_BYTES = MAX_MESSAGE_BYTES - 64 * 1024;

/** The declaration of an action, by id, from its domain (loaded with its schemas on first ask). */
async function declaredAction(id: string): Promise<Action> {
  const action = await loadAction(id);
  if (!action) throw new FleetError('internal', `this agent serves ${id}, which no domain declares`);
  return action;
}

/**
 * Runs the calls the broker sends: checks parameters against the action's
 * schema, runs the handler under the call's deadline and cancellation, and
 * answers exactly once. An action this agent does not know is `unsupported`.
 * A handler registered by action id has its declaration (and its domain's
 * schemas) loaded when its first call comes, so an idle agent holds none.
 */
export class Dispatcher {
  /** Each served action's handler, and its declaration once known. */
  private readonly handlers = new Map<string, { action: Action | undefined; handler: ActionHandler }>();
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly log: Logger) {}

  /** Serves an action: its declaration, or its id (`register<typeof declaration>('domain.action', …)`) to load the declaration on first call. */
  register<A extends Action>(action: A | string, handler: ActionHandler<A>): void {
    const id = typeof action === 'string' ? action : action.id;
    this.handlers.set(id, { action: typeof action === 'string' ? undefined : action, handler: handler as unknown as ActionHandler });
  }

  /** The action ids this agent serves, for Hello. */
  actions(): string[] {
    return [...this.handlers.keys()].sort();
  }

  get inFlight(): number {
    return this.running.size;
  }

  async run(call: IncomingCall, sink: ResultSink): Promise<void> {
    const log = this.log.child({ call_id: call.callId, action: call.action });
    const answer = (payload: unknown, errors: ErrorInfo[], failedCollectors: string[] = [], absentCollectors: string[] = []) => {
      let bytes = encoder.encode(JSON.stringify(payload ?? null));
      if (bytes.length > MAX_PAYLOAD_BYTES) {
        errors = [
          ...errors,
          new FleetError('result_too_large', `the result is ${bytes.length} bytes, over the ${MAX_PAYLOAD_BYTES}-byte limit`, {
            hint: 'Narrow the request (a smaller limit, fewer lines, a filter).',
          }).toInfo(),
        ];
        bytes = encoder.encode('null');
      }
      sink.result(call.callId, bytes, failedCollectors, errors, absentCollectors);
    };
    const entry = this.handlers.get(call.action);
    if (!entry) {
      answer(null, [
        new FleetError('unsupported', `this agent does not know the action ${call.action}`, {
          hint: 'Upgrade the agent on this host to a fleetmesh version that has it.',
        }).toInfo(),
      ]);
      return;
    }
    let params: unknown;
    let action: Action;
    try {
      // Loaded once (the domain module is kept); a cancel that comes meanwhile finds no running call yet.
      action = entry.action ??= await declaredAction(call.action);
      const raw: unknown = call.paramsJson.length === 0 ? {} : JSON.parse(decoder.decode(call.paramsJson));
      const parsed = action.input.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new FleetError('invalid_argument', `${issue?.path.join('.') || 'parameters'}: ${issue?.message ?? 'invalid'}`, {
          hint: `Check the parameters of ${action.tool}.`,
        });
      }
      params = parsed.data;
    } catch (error) {
      answer(null, [toFleetError(error).toInfo()]);
      return;
    }

    const controller = new AbortController();
    this.running.set(call.callId, controller);
    const remainingMs = call.deadlineUnixMs - Date.now();
    const timer = setTimeout(
      () => controller.abort(new FleetError('deadline_exceeded', 'the call passed its deadline on the agent')),
      Math.max(0, remainingMs),
    );
    let seq = 0;
    const context: CallContext = {
      callId: call.callId,
      caller: call.caller,
      callerLevel: call.callerLevel,
      signal: controller.signal,
      deadlineUnixMs: call.deadlineUnixMs,
      emit: (payload) => {
        if (!controller.signal.aborted) sink.chunk(call.callId, seq++, encoder.encode(JSON.stringify(payload)));
      },
      log,
    };
    try {
      const work = entry.handler(params as Record<string, unknown>, context);
      // A read stops at its deadline or cancel. A change goes on (the engine is making it anyway, and
      // the handler sees the signal where it can stop): its true outcome is answered when known.
      const result =
        action.risk === 'read'
          ? await Promise.race([
              work,
              new Promise<never>((_, reject) => {
                if (controller.signal.aborted) reject(controller.signal.reason);
                controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
              }),
            ])
          : await work;
      answer(result.payload, result.errors ?? [], result.failedCollectors ?? [], result.absentCollectors ?? []);
    } catch (error) {
      const failure = toFleetError(error);
      if (controller.signal.aborted) log.info('call stopped', { reason: failure.message });
      else if (failure.code === 'internal') log.error('action failed', { error: failure.message });
      // An action whose collector is absent here answers its error, and says the collector is absent.
      answer(null, [failure.toInfo()], [], failure.details?.absent === true && failure.collector ? [failure.collector] : []);
    } finally {
      clearTimeout(timer);
      this.running.delete(call.callId);
    }
  }

  /** The broker no longer wants this call's answer: stop its work. */
  cancel(callId: string, reason: string): void {
    const controller = this.running.get(callId);
    if (!controller) return;
    this.log.info('call cancelled', { call_id: callId, reason });
    controller.abort(new FleetError('deadline_exceeded', `cancelled by the broker: ${reason}`));
  }

  /** The stream is gone: nobody will read these answers. */
  cancelAll(reason: string): void {
    for (const callId of [...this.running.keys()]) this.cancel(callId, reason);
  }
}
