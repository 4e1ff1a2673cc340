import { errorInfo } from '../../shared/errors/fleet-error.ts';
import type { Host } from '../agents/agent-registry.ts';
import { type CallAuthority, type CallOutcome, callFrame, encodeParams } from '../agents/agent-session.ts';
import { offersAction } from '../agents/shared-hellos.ts';

export interface FanOutRequest {
  action: string;
  params: unknown;
  timeoutMs: number;
  caller: string;
  callerLevel?: number;
  signal?: AbortSignal;
  onChunk?: (host: Host, payload: unknown, seq: number) => void;
  /** Called as each host settles, in the order they do: progress for the client. */
  onHostDone?: (outcome: HostOutcome, done: number, total: number) => void;
  /** A host's answer that came after its outcome settled by the deadline or cancellation. */
  onLate?: (outcome: HostOutcome) => void;
  /** The call's audit row, for late answers that reach another broker of a cluster. */
  auditId?: string;
  /** Who asks, for a broker of a cluster that runs the call for this one. */
  authority?: CallAuthority;
}

export interface HostOutcome {
  host: Host;
  outcome: CallOutcome;
  durationMs: number;
}

/** Why a host cannot take this call without asking it, or undefined when it can. */
function refuseLocally(host: Host, action: string): CallOutcome | undefined {
  if (!host.session?.isOpen) {
    const since = host.lastSeenAt ? ` (last seen ${new Date(host.lastSeenAt).toISOString()})` : ' (never connected)';
    return {
      ok: false,
      error: errorInfo(
        'agent_offline',
        `agent ${host.name} is offline${since}`,
        'list_agents shows every agent and when it was last seen; the host answers again once its agent reconnects.',
      ),
    };
  }
  if (host.hello && !offersAction(host.hello, action)) {
    return {
      ok: false,
      error: errorInfo(
        'unsupported',
        `agent ${host.name} (fleetmesh ${host.version || 'unknown version'}) does not offer ${action}`,
        'Upgrade the agent on that host, or check agent_info for what it runs.',
      ),
    };
  }
  return undefined;
}

/**
 * Sends one call to many agents at once and collects every answer under one
 * deadline. A host never holds the others: each settles on its own by result,
 * deadline, disconnection or cancellation, and every target gets an outcome.
 */
export async function fanOut(targets: readonly Host[], request: FanOutRequest): Promise<HostOutcome[]> {
  const deadlineUnixMs = Date.now() + request.timeoutMs;
  // The same frame goes to every host: built and encoded once, not once per host.
  const paramsJson = encodeParams(request.params);
  const frame = callFrame({
    action: request.action,
    params: request.params,
    paramsJson,
    deadlineUnixMs,
    caller: request.caller,
    ...(request.callerLevel !== undefined ? { callerLevel: request.callerLevel } : {}),
  });
  const cancellation = request.signal && targets.length > 1 ? new RoundCancellation(request.signal) : undefined;
  let done = 0;
  try {
    return await Promise.all(targets.map(callOne));
  } finally {
    cancellation?.dispose();
  }

  async function callOne(host: Host): Promise<HostOutcome> {
    const started = performance.now();
    const signal = cancellation ? cancellation.signalFor() : request.signal;
    const outcome =
      refuseLocally(host, request.action) ??
      (await (host.session as NonNullable<Host['session']>).call({
        action: request.action,
        params: request.params,
        paramsJson,
        frame,
        deadlineUnixMs,
        caller: request.caller,
        ...(request.callerLevel !== undefined ? { callerLevel: request.callerLevel } : {}),
        ...(signal ? { signal } : {}),
        ...(request.onChunk ? { onChunk: (payload: unknown, seq: number) => request.onChunk?.(host, payload, seq) } : {}),
        ...(request.auditId ? { auditId: request.auditId } : {}),
        ...(request.authority ? { authority: request.authority } : {}),
        ...(request.onLate ? { onLate: (late: CallOutcome) => request.onLate?.({ host, outcome: late, durationMs: performance.now() - started }) } : {}),
      }));
    const result = { host, outcome, durationMs: performance.now() - started };
    done += 1;
    request.onHostDone?.(result, done, targets.length);
    return result;
  }
}

/**
 * One listener on the caller's signal for a whole round, relayed to a signal per
 * host: an EventTarget scans its listeners on every add and remove, so a
 * listener per host made a fleet-wide call quadratic in the fleet's size (and
 * warned past ten listeners).
 */
class RoundCancellation {
  private readonly controllers: AbortController[] = [];
  private readonly onAbort = () => {
    for (const controller of this.controllers) controller.abort();
  };

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  signalFor(): AbortSignal {
    const controller = new AbortController();
    if (this.signal.aborted) controller.abort();
    this.controllers.push(controller);
    return controller.signal;
  }

  dispose(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }
}
