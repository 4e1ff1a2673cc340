import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { type BrokerFrame, CallErrorSchema, ResultSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import { AgentSession } from './agent-session.ts';

function session(): { session: AgentSession; sent: BrokerFrame[] } {
  const sent: BrokerFrame[] = [];
  return { session: new AgentSession({ write: (frame: BrokerFrame) => sent.push(frame), end: () => {}, emit: () => {} }, 'agent-1', 'serial'), sent };
}

describe('a call on an agent session', () => {
  it("settles as deadline_exceeded when the agent's own deadline answer arrives before the broker's timer", async () => {
    const { session: s, sent } = session();
    const pending = s.call({ action: 'agent.info', params: {}, deadlineUnixMs: Date.now() + 60_000, caller: 'test' });
    const callId = sent[0]?.frame.case === 'call' ? sent[0].frame.value.callId : '';
    s.onResult(
      create(ResultSchema, {
        callId,
        payloadJson: new TextEncoder().encode('null'),
        errors: [create(CallErrorSchema, { code: 'deadline_exceeded', message: 'the call passed its deadline on the agent', hint: '' })],
      }),
    );
    expect(await pending).toMatchObject({ ok: false, error: { code: 'deadline_exceeded' } });
  });

  it('keeps a result with a payload as the answer, whatever its errors', async () => {
    const { session: s, sent } = session();
    const pending = s.call({ action: 'agent.info', params: {}, deadlineUnixMs: Date.now() + 60_000, caller: 'test' });
    const callId = sent[0]?.frame.case === 'call' ? sent[0].frame.value.callId : '';
    s.onResult(
      create(ResultSchema, {
        callId,
        payloadJson: new TextEncoder().encode('{"partial":true}'),
        errors: [create(CallErrorSchema, { code: 'deadline_exceeded', message: 'one collector ran out of time', hint: '' })],
      }),
    );
    expect(await pending).toMatchObject({ ok: true, payload: { partial: true } });
  });
});
