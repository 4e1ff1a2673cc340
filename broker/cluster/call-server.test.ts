import type { Msg } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { errorInfo } from '../../shared/errors/fleet-error.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { CallOutcome, CallRequest } from '../agents/agent-session.ts';
import { FULL_ACCESS } from '../auth/grants.ts';
import { ToolFilter } from '../auth/tool-filter.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { Bus } from './bus.ts';
import { type CallReply, type CallRequestMessage, callReply } from './bus-messages.ts';
import { CallServer } from './call-server.ts';

/** A call server on broker `b` over a bus that records the sealed replies, with `hosts` held here and a store that allows everything. */
function serverFor(hosts: Host[]) {
  const handlers = new Map<string, (message: { sender: string; message: unknown }, raw: Msg) => void>();
  const replies: { message: CallReply; recipients: readonly string[] }[] = [];
  const bus = {
    subscribe: (subject: string, _schema: unknown, handler: (message: { sender: string; message: unknown }, raw: Msg) => void) => {
      handlers.set(subject, handler);
      return { unsubscribe: () => handlers.delete(subject) };
    },
    publishSealed: (_subject: string, message: unknown, recipients: readonly string[]) => replies.push({ message: message as CallReply, recipients }),
    publishSealedJson: (_subject: string, json: string, recipients: readonly string[]) => replies.push({ message: JSON.parse(json) as CallReply, recipients }),
    refuse: () => {},
  };
  const registry = { get: (id: string) => hosts.find((host) => host.id === id), held: () => [] } as unknown as AgentRegistry;
  const noted: [string, string][] = [];
  const store = {
    identities: {
      get: async () => ({
        id: 'id-1',
        name: 'ops',
        kind: 'token',
        level: 3,
        grants: FULL_ACCESS,
        tools: ToolFilter.NONE.globs,
        revokedAt: null,
        expiresAt: Date.now() + 60_000,
      }),
    },
    audit: {
      get: async () => ({ callId: 'audit-row-1', outcome: 'pending', brokerId: 'a', identity: 'ops', action: 'agent.set_labels' }),
      noteLate: async (callId: string, note: string) => void noted.push([callId, note]),
    },
  };
  const server = new CallServer({
    bus: bus as unknown as Bus,
    registry,
    relay: { store: store as never, index: {} as FleetIndex, operationsLevel: 3, tools: ToolFilter.NONE, brokerActions: [], selfId: 'b' },
    audit: store.audit,
    refusals: { record: async () => {} },
    log: silentLogger,
  });
  server.start();
  /** Broker `a` sends a call for several agents on this broker's subject. */
  const send = (request: CallRequestMessage) => handlers.get('fleetmesh.calls.broker.b')?.({ sender: 'a', message: request }, { reply: '_INBOX.1' } as Msg);
  return { server, replies, noted, send };
}

/** An agent held here that answers `call` as its session. */
function heldHost(id: string, name: string, call: (request: CallRequest) => Promise<CallOutcome>): Host {
  return { id, name, hello: null, session: { isOpen: true, inFlight: 0, connectedAt: 1, close: () => {}, call } } as unknown as Host;
}

const labelsCall = (overrides: Partial<CallRequestMessage> = {}): CallRequestMessage => ({
  requestId: 'r1',
  from: 'a',
  agents: ['agent-1'],
  action: 'agent.set_labels',
  params: {},
  timeoutMs: 900,
  caller: 'ops',
  authority: { identityId: 'id-1', actionId: 'agent.set_labels', confirmed: false },
  streamChunks: false,
  auditId: 'audit-row-1',
  ...overrides,
});

describe('the calls a broker serves for other brokers', () => {
  it("notes in the call's audit row what its agent answered after the calling broker gave up", async () => {
    let answerLate: ((outcome: CallOutcome) => void) | undefined;
    const host = heldHost('agent-1', 'web-1', async (request) => {
      answerLate = request.onLate;
      return { ok: false, error: errorInfo('deadline_exceeded', 'the agent did not answer within 900 ms', '') };
    });
    const { server, replies, noted, send } = serverFor([host]);
    send(labelsCall());
    await new Promise((resolve) => setImmediate(resolve));
    expect(replies).toMatchObject([
      { message: { t: 'outcome', agent: 'agent-1', outcome: { ok: false, error: { code: 'deadline_exceeded' } } }, recipients: ['a'] },
    ]);
    answerLate?.({ ok: true, payload: { labels: {} }, failedCollectors: [], errors: [] });
    expect(noted).toEqual([
      ['audit-row-1', 'run on broker b for web-1'],
      ['audit-row-1', expect.stringMatching(/^web-1 answered ok after \d+ ms, past the call's 900 ms deadline \(on broker b\)$/)],
    ]);
    server.stop();
  });

  it('answers a call for several agents in one sealed batch when the asking broker reads batches, one message each when it does not', async () => {
    const ok = (labels: Record<string, string>): CallOutcome => ({ ok: true, payload: { labels }, failedCollectors: [], errors: [] });
    const hosts = [heldHost('agent-1', 'web-1', async () => ok({ n: '1' })), heldHost('agent-2', 'web-2', async () => ok({ n: '2' }))];
    const agents = ['agent-1', 'agent-2', 'agent-moved'];

    const batched = serverFor(hosts);
    batched.send(labelsCall({ agents, batchOutcomes: true }));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(batched.replies).toHaveLength(1);
    const [only] = batched.replies;
    expect(only?.recipients).toEqual(['a']);
    expect(callReply.parse(only?.message)).toMatchObject({
      t: 'outcomes',
      outcomes: [
        { agent: 'agent-moved', outcome: { ok: false, error: { code: 'agent_offline' } } },
        { agent: 'agent-1', outcome: { ok: true, payload: { labels: { n: '1' } } } },
        { agent: 'agent-2', outcome: { ok: true, payload: { labels: { n: '2' } } } },
      ],
    });
    batched.server.stop();

    const single = serverFor(hosts);
    single.send(labelsCall({ agents }));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(single.replies.map((reply) => reply.message)).toMatchObject([
      { t: 'outcome', agent: 'agent-moved' },
      { t: 'outcome', agent: 'agent-1' },
      { t: 'outcome', agent: 'agent-2' },
    ]);
    single.server.stop();
  });
});
