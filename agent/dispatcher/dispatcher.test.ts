import { describe, expect, it } from 'vitest';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import type { ErrorInfo } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { type ActionHandler, Dispatcher, type IncomingCall, type ResultSink } from './dispatcher.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What a sink was told, in order, decoded. */
function recordingSink() {
  const chunks: unknown[] = [];
  const results: { payload: unknown; errors: ErrorInfo[] }[] = [];
  const sink: ResultSink = {
    chunk: (_callId, _seq, payloadJson) => chunks.push(JSON.parse(decoder.decode(payloadJson))),
    result: (_callId, payloadJson, _failed, errors) => results.push({ payload: JSON.parse(decoder.decode(payloadJson)), errors }),
  };
  return { sink, chunks, results };
}

function call(action: string, params: unknown = {}, deadlineMs = 5000): IncomingCall {
  return {
    callId: `call-${action}`,
    action,
    paramsJson: encoder.encode(JSON.stringify(params)),
    deadlineUnixMs: Date.now() + deadlineMs,
    caller: 'test',
    callerLevel: 0,
  };
}

/** A handler that waits until its call is aborted, then fails with the abort's reason. */
const untilAborted: ActionHandler = (_params, context) =>
  new Promise((_, reject) => {
    context.emit({ started: true });
    context.signal.addEventListener('abort', () => reject(context.signal.reason), { once: true });
  });

describe('Dispatcher', () => {
  it('answers an action it does not know as unsupported', async () => {
    const { sink, results } = recordingSink();
    await new Dispatcher(silentLogger).run(call('docker.logs'), sink);
    expect(results).toEqual([{ payload: null, errors: [expect.objectContaining({ code: 'unsupported' })] }]);
  });

  it('checks parameters against the schema before the handler runs', async () => {
    const dispatcher = new Dispatcher(silentLogger);
    let ran = false;
    dispatcher.register(agentInfo, async () => {
      ran = true;
      return { payload: {} };
    });
    const { sink, results } = recordingSink();
    await dispatcher.run(call('agent.info', { interval_ms: 5 }), sink);
    expect(ran).toBe(false);
    expect(results).toEqual([
      { payload: null, errors: [expect.objectContaining({ code: 'invalid_argument', message: expect.stringMatching(/^interval_ms/) })] },
    ]);
  });

  it('streams chunks before the one final answer', async () => {
    const dispatcher = new Dispatcher(silentLogger);
    dispatcher.register(agentInfo, async (_params, context) => {
      context.emit({ n: 1 });
      context.emit({ n: 2 });
      return { payload: { done: true }, failedCollectors: [], errors: [] };
    });
    const { sink, chunks, results } = recordingSink();
    await dispatcher.run(call('agent.info'), sink);
    expect(chunks).toEqual([{ n: 1 }, { n: 2 }]);
    expect(results).toEqual([{ payload: { done: true }, errors: [] }]);
  });

  it('stops a read at its deadline', async () => {
    const dispatcher = new Dispatcher(silentLogger);
    dispatcher.register(agentInfo, untilAborted);
    const { sink, chunks, results } = recordingSink();
    await dispatcher.run(call('agent.info', {}, 50), sink);
    expect(chunks).toEqual([{ started: true }]);
    expect(results).toEqual([{ payload: null, errors: [expect.objectContaining({ code: 'deadline_exceeded' })] }]);
    expect(dispatcher.inFlight).toBe(0);
  });

  it('stops a call the broker cancels, and answers once', async () => {
    const dispatcher = new Dispatcher(silentLogger);
    dispatcher.register(agentInfo, untilAborted);
    const { sink, results } = recordingSink();
    const running = dispatcher.run(call('agent.info'), sink);
    expect(dispatcher.inFlight).toBe(1);
    dispatcher.cancel('call-agent.info', 'the caller went away');
    await running;
    expect(results).toHaveLength(1);
    expect(results[0]?.errors).toEqual([expect.objectContaining({ message: expect.stringContaining('the caller went away') })]);
    expect(dispatcher.inFlight).toBe(0);
  });
});
