import type { CallOutcome, CallRequest, HostSession } from '../agents/agent-session.ts';
import type { RemoteCalls } from './remote-calls.ts';

/**
 * An agent whose stream another broker holds, as the registry sees it: calls
 * go to that broker over the bus. Closing it closes nothing (the stream is not
 * here); the holding broker closes it when it must.
 */
export class RemoteSession implements HostSession {
  constructor(
    readonly heldBy: string,
    readonly agentId: string,
    readonly connectedAt: number,
    private readonly calls: RemoteCalls,
  ) {}

  get isOpen(): boolean {
    return true;
  }

  get inFlight(): number {
    return this.calls.inFlightFor(this.agentId);
  }

  call(request: CallRequest): Promise<CallOutcome> {
    return this.calls.call(this.heldBy, this.agentId, request);
  }

  close(): void {}
}
