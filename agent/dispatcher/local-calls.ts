import type { Action, ActionInput, ActionOutput } from '../../shared/catalog/action.ts';
import type { ErrorInfo } from '../../shared/errors/fleet-error.ts';
import type { CallContext, Dispatcher } from './dispatcher.ts';

/** One action's answer on this host: its payload (null when it gave none), what failed, and what is absent here. */
interface LocalAnswer<A extends Action> {
  payload: ActionOutput<A> | null;
  failedCollectors: string[];
  errors: ErrorInfo[];
  absentCollectors: string[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Runs other actions of this agent in-process, through the same dispatcher the
 * broker's calls go through (their schemas, deadlines and collector checks), so
 * a check-up or the alerts read the host exactly as docker_list or agent_info
 * would, and a collector that cannot answer is an answer without payload,
 * never a throw.
 */
export class LocalCalls {
  private dispatcher: Dispatcher | undefined;
  private sequence = 0;

  attach(dispatcher: Dispatcher): void {
    this.dispatcher = dispatcher;
  }

  /** Runs an action of this agent: its declaration, or its id (`run<typeof agentInfo>('agent.info', …)`). */
  async run<A extends Action>(action: A | string, params: ActionInput<A>, context: CallContext): Promise<LocalAnswer<A>> {
    const dispatcher = this.dispatcher;
    if (!dispatcher) throw new Error('local calls before the collector was registered');
    const id = typeof action === 'string' ? action : action.id;
    const callId = `${context.callId}/${id}/${this.sequence++}`;
    const cancel = () => dispatcher.cancel(callId, 'the call that asked ended');
    context.signal.addEventListener('abort', cancel, { once: true });
    try {
      return await new Promise<LocalAnswer<A>>((resolve) => {
        void dispatcher.run(
          {
            callId,
            action: id,
            paramsJson: encoder.encode(JSON.stringify(params)),
            deadlineUnixMs: context.deadlineUnixMs,
            caller: context.caller,
            callerLevel: context.callerLevel,
          },
          {
            chunk: () => undefined,
            result: (_id, payloadJson, failedCollectors, errors, absentCollectors = []) =>
              resolve({ payload: JSON.parse(decoder.decode(payloadJson)) as ActionOutput<A> | null, failedCollectors, errors, absentCollectors }),
          },
        );
      });
    } finally {
      context.signal.removeEventListener('abort', cancel);
    }
  }
}
