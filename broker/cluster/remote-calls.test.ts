import { describe, expect, it } from 'vitest';
import type { CallRequest } from '../agents/agent-session.ts';
import type { CallReply, CallRequestMessage } from './bus-messages.ts';
import { RemoteCalls } from './remote-calls.ts';

/** The slice of the bus RemoteCalls uses, recording what is published and letting a test answer (as broker `b` unless told). */
function fakeBus() {
  const published: { subject: string; message: unknown; reply: string | undefined; recipients: readonly string[] | undefined }[] = [];
  const inboxes = new Map<string, (reply: { sender: string; message: CallReply } | 'no_responders') => void>();
  const refused: string[] = [];
  let inboxCount = 0;
  return {
    published,
    refused,
    connected: true,
    publish(subject: string, message: unknown, reply?: string) {
      published.push({ subject, message, reply, recipients: undefined });
    },
    publishSealed(subject: string, message: unknown, recipients: readonly string[], options: { reply?: string } = {}) {
      published.push({ subject, message, reply: options.reply, recipients });
    },
    knows: (broker: string) => broker !== 'stranger',
    refuse: (reason: string) => void refused.push(reason),
    inbox: () => `_INBOX.test.${++inboxCount}`,
    replies(subject: string, _schema: unknown, onReply: (reply: { sender: string; message: CallReply } | 'no_responders') => void) {
      inboxes.set(subject, onReply);
      return { unsubscribe: () => inboxes.delete(subject) };
    },
    answer(inbox: string, reply: CallReply | 'no_responders', sender = 'b') {
      inboxes.get(inbox)?.(reply === 'no_responders' ? reply : { sender, message: reply });
    },
    listening: () => inboxes.size,
  };
}

/** RemoteCalls of broker `a`, with the other brokers alive. */
function remoteCalls(bus: ReturnType<typeof fakeBus>, others = ['b', 'c']): RemoteCalls {
  return new RemoteCalls(bus as unknown as ConstructorParameters<typeof RemoteCalls>[0], 'a', () => others);
}

function request(overrides: Partial<CallRequest> = {}): CallRequest {
  return {
    action: 'agent.info',
    params: {},
    deadlineUnixMs: Date.now() + 10_000,
    caller: 'test',
    authority: { identityId: 'id-1', actionId: 'agent.info', confirmed: false },
    ...overrides,
  };
}

const settled = (promise: Promise<unknown>) => Promise.race([promise.then(() => true), new Promise((resolve) => setImmediate(() => resolve(false)))]);

describe('calls to agents held by other brokers', () => {
  it('sends the calls of one fan-out as one request per holding broker, and a lone call to the agent itself', async () => {
    const bus = fakeBus();
    const calls = remoteCalls(bus);
    const shared = request();
    void calls.call('b', 'agent-1', shared);
    void calls.call('b', 'agent-2', shared);
    void calls.call('c', 'agent-3', shared);
    await Promise.resolve();
    const subjects = bus.published.map((p) => `${p.subject} ${(p.message as CallRequestMessage).agents.join(',')}`);
    expect(subjects.sort()).toEqual(['fleetmesh.calls.agent.agent-3 agent-3', 'fleetmesh.calls.broker.b agent-1,agent-2']);
    expect(calls.inFlightFor('agent-1')).toBe(1);
    // Sealed: to the holding broker, and for an agent's own subject to every broker, as any may hold it by the time it arrives.
    expect(bus.published.find((p) => p.subject === 'fleetmesh.calls.broker.b')?.recipients).toEqual(['b']);
    expect(bus.published.find((p) => p.subject === 'fleetmesh.calls.agent.agent-3')?.recipients).toEqual(['c', 'b']);
    expect(bus.published[0]?.message).toMatchObject({ authority: { identityId: 'id-1', actionId: 'agent.info', confirmed: false } });
  });

  it('takes the answers of a call for several agents only from the broker it went to', async () => {
    const bus = fakeBus();
    const calls = remoteCalls(bus);
    const shared = request();
    const first = calls.call('b', 'agent-1', shared);
    void calls.call('b', 'agent-2', shared);
    await Promise.resolve();
    const inbox = bus.published[0]?.reply as string;
    bus.answer(inbox, { t: 'outcome', agent: 'agent-1', outcome: { ok: true, payload: { forged: true }, failedCollectors: [], errors: [] } }, 'c');
    expect(await settled(first)).toBe(false);
    expect(bus.refused).toEqual(['wrong_sender']);
    bus.answer(inbox, { t: 'outcome', agent: 'agent-1', outcome: { ok: true, payload: { done: 1 }, failedCollectors: [], errors: [] } });
    expect(await first).toMatchObject({ ok: true, payload: { done: 1 } });
  });

  it('refuses at once a call that names no identity, or for a broker whose keys are not known yet', async () => {
    const bus = fakeBus();
    const calls = remoteCalls(bus, ['b']);
    expect(await calls.call('b', 'agent-1', request({ authority: undefined }))).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(await calls.call('stranger', 'agent-1', request())).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(bus.published).toEqual([]);
  });

  it('passes chunks on in order and settles each agent by its own outcome', async () => {
    const bus = fakeBus();
    const calls = remoteCalls(bus);
    const chunks: unknown[] = [];
    const shared = request({ onChunk: (payload) => chunks.push(payload) });
    const first = calls.call('b', 'agent-1', shared);
    const second = calls.call('b', 'agent-2', shared);
    await Promise.resolve();
    const [sent] = bus.published;
    const inbox = sent?.reply as string;
    expect(sent?.message).toMatchObject({ streamChunks: true });
    bus.answer(inbox, { t: 'chunk', agent: 'agent-1', seq: 1, payload: 'one' });
    bus.answer(inbox, { t: 'chunk', agent: 'agent-1', seq: 2, payload: 'two' });
    bus.answer(inbox, { t: 'outcome', agent: 'agent-1', outcome: { ok: true, payload: { done: 1 }, failedCollectors: [], errors: [] } });
    expect(await first).toMatchObject({ ok: true, payload: { done: 1 } });
    expect(chunks).toEqual(['one', 'two']);
    expect(await settled(second)).toBe(false);
    bus.answer(inbox, { t: 'outcome', agent: 'agent-2', outcome: { ok: false, error: { code: 'collector_failed', message: 'no', hint: '' } } });
    expect(await second).toMatchObject({ ok: false, error: { code: 'collector_failed' } });
    expect(bus.listening()).toBe(0);
  });

  it('asks for the outcomes of a call for several agents in batches and settles each agent of a batch; a lone call asks for none', async () => {
    const bus = fakeBus();
    const calls = remoteCalls(bus);
    const shared = request();
    const first = calls.call('b', 'agent-1', shared);
    const second = calls.call('b', 'agent-2', shared);
    const lone = calls.call('c', 'agent-3', request());
    await Promise.resolve();
    const [batched, single] = bus.published;
    expect(batched?.message).toMatchObject({ agents: ['agent-1', 'agent-2'], batchOutcomes: true });
    expect(single?.message).not.toHaveProperty('batchOutcomes');
    bus.answer(batched?.reply as string, {
      t: 'outcomes',
      outcomes: [
        { agent: 'agent-2', outcome: { ok: true, payload: { n: 2 }, failedCollectors: [], errors: [] } },
        { agent: 'agent-1', outcome: { ok: false, error: { code: 'collector_failed', message: 'no', hint: '' } } },
      ],
    });
    expect(await first).toMatchObject({ ok: false, error: { code: 'collector_failed' } });
    expect(await second).toMatchObject({ ok: true, payload: { n: 2 } });
    expect(await settled(lone)).toBe(false);
  });

  it('answers agent_offline when no broker holds the agent (no responders)', async () => {
    const bus = fakeBus();
    const calls = remoteCalls(bus);
    const pending = calls.call('b', 'agent-1', request());
    await Promise.resolve();
    bus.answer(bus.published[0]?.reply as string, 'no_responders');
    expect(await pending).toMatchObject({ ok: false, error: { code: 'agent_offline' } });
  });

  it('settles the calls waiting on a broker that left, naming it, and cancels on the holding broker when the caller cancels', async () => {
    const bus = fakeBus();
    const calls = remoteCalls(bus);
    const controller = new AbortController();
    const leaving = calls.call('b', 'agent-1', request());
    const cancelled = calls.call('c', 'agent-2', request({ signal: controller.signal }));
    await Promise.resolve();
    calls.brokerGone('b');
    expect(await leaving).toMatchObject({ ok: false, error: { code: 'agent_disconnected', message: expect.stringMatching(/broker b\b/) } });
    controller.abort();
    expect(await cancelled).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect(bus.published.map((p) => p.subject)).toContainEqual(expect.stringMatching(/^fleetmesh\.cancel\./));
  });

  it('refuses at once with unavailable while the bus is down', async () => {
    const bus = { ...fakeBus(), connected: false };
    const calls = remoteCalls(bus);
    expect(await calls.call('b', 'agent-1', request())).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(bus.published).toEqual([]);
  });
});
