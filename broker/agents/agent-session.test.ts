import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { type BrokerFrame, CallErrorSchema, ResultSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { AgentSession } from './agent-session.ts';

/** Sends one call on a session and has the agent answer it with this payload and one deadline_exceeded error. */
function callAnswered(payloadJson: string, errorMessage: string): ReturnType<AgentSession['call']> {
  const sent: BrokerFrame[] = [];
  const session = new AgentSession({ write: (frame: BrokerFrame) => sent.push(frame), end: () => {}, emit: () => {} }, 'agent-1', 'serial');
  const pending = session.call({ action: 'agent.info', params: {}, deadlineUnixMs: Date.now() + 60_000, caller: 'test' });
  const callId = sent[0]?.frame.case === 'call' ? sent[0].frame.value.callId : '';
  session.onResult(
    create(ResultSchema, {
      callId,
      payloadJson: new TextEncoder().encode(payloadJson),
      errors: [create(CallErrorSchema, { code: 'deadline_exceeded', message: errorMessage, hint: '' })],
    }),
  );
  return pending;
}

describe('a call on an agent session', () => {
  it("settles as deadline_exceeded when the agent's own deadline answer arrives before the broker's timer", async () => {
    expect(await callAnswered('null', 'the call passed its deadline on the agent')).toMatchObject({ ok: false, error: { code: 'deadline_exceeded' } });
  });

  it('keeps a result with a payload as the answer, whatever its errors', async () => {
    expect(await callAnswered('{"partial":true}', 'one collector ran out of time')).toMatchObject({ ok: true, payload: { partial: true } });
  });

  it('reads an answer that came in while the loop was held past the deadline before giving the call up', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect((server.address() as { port: number }).port, '127.0.0.1');
    await once(client, 'connect');
    const [agentEnd] = await accepted;
    try {
      const sent: BrokerFrame[] = [];
      const session = new AgentSession({ write: (frame: BrokerFrame) => sent.push(frame), end: () => {}, emit: () => {} }, 'agent-1', 'serial');
      const pending = session.call({ action: 'agent.info', params: {}, deadlineUnixMs: Date.now() + 30, caller: 'test' });
      const callId = sent[0]?.frame.case === 'call' ? sent[0].frame.value.callId : '';
      // The answer reaches the broker's socket in time; the broker's loop is busy until after the deadline.
      client.on('data', (bytes) => session.onResult(create(ResultSchema, { callId, payloadJson: bytes, errors: [] })));
      agentEnd.write('{"answered":true}');
      const until = performance.now() + 150;
      while (performance.now() < until);
      expect(await pending).toMatchObject({ ok: true, payload: { answered: true } });
    } finally {
      client.destroy();
      agentEnd.destroy();
      server.close();
    }
  });
});
