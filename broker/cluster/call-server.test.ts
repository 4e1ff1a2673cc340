import type { Msg } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { errorInfo } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { CallOutcome, CallRequest } from '../agents/agent-session.ts';
import type { Bus } from './bus.ts';
import type { CallReply, CallRequestMessage } from './bus-messages.ts';
import { CallServer } from './call-server.ts';

describe('the calls a broker serves for other brokers', () => {
  it("notes in the call's audit row what its agent answered after the calling broker gave up", async () => {
    const handlers = new Map<string, (message: unknown, raw: Msg) => void>();
    const replies: CallReply[] = [];
    const bus = {
      subscribe: (subject: string, _schema: unknown, handler: (message: unknown, raw: Msg) => void) => {
        handlers.set(subject, handler);
        return { unsubscribe: () => handlers.delete(subject) };
      },
      publish: (_subject: string, message: unknown) => replies.push(message as CallReply),
    };
    let answerLate: ((outcome: CallOutcome) => void) | undefined;
    const host = {
      id: 'agent-1',
      name: 'web-1',
      hello: null,
      session: {
        isOpen: true,
        inFlight: 0,
        connectedAt: 1,
        close: () => {},
        call: async (request: CallRequest): Promise<CallOutcome> => {
          answerLate = request.onLate;
          return { ok: false, error: errorInfo('deadline_exceeded', 'the agent did not answer within 900 ms', '') };
        },
      },
    } as unknown as Host;
    const registry = { get: () => host, held: () => [] } as unknown as AgentRegistry;
    const noted: [string, string][] = [];
    const server = new CallServer(bus as unknown as Bus, registry, { noteLate: async (callId, note) => void noted.push([callId, note]) }, 'b', silentLogger);
    server.start();
    const request: CallRequestMessage = {
      requestId: 'r1',
      from: 'a',
      agents: ['agent-1'],
      action: 'agent.set_labels',
      params: {},
      timeoutMs: 900,
      caller: 'ops',
      streamChunks: false,
      auditId: 'audit-row-1',
    };
    handlers.get('fleetmesh.calls.broker.b')?.(request, { reply: '_INBOX.1' } as Msg);
    await new Promise((resolve) => setImmediate(resolve));
    expect(replies).toMatchObject([{ t: 'outcome', agent: 'agent-1', outcome: { ok: false, error: { code: 'deadline_exceeded' } } }]);
    answerLate?.({ ok: true, payload: { labels: {} }, failedCollectors: [], errors: [] });
    expect(noted).toEqual([['audit-row-1', expect.stringMatching(/^web-1 answered ok after \d+ ms, past the call's 900 ms deadline \(on broker b\)$/)]]);
    server.stop();
  });
});
