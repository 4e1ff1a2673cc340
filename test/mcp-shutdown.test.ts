import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { type RogueAgent, startRogueAgent } from './harness/rogue-agent.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

describe('a broker stopping the orderly way', () => {
  let fleet: TestFleet;
  let held: RogueAgent;
  beforeAll(async () => {
    fleet = await startTestFleet();
    held = await startRogueAgent(fleet, 'held-answer', { collectors: ['agent'] });
  });
  afterAll(async () => {
    held.close();
    await fleet.stop();
  });

  it('answers a call still running when its session ends with an error that says its outcome is unknown, rather than leave it hanging', async () => {
    const token = await identityToken(fleet.broker, 0);
    const caller = await mcpClient(fleet.broker, token);
    const sessionId = (caller.transport as unknown as { sessionId: string }).sessionId;
    const before = held.calls().length;
    // The agent never answers this one.
    const pending = call(caller, 'agent_info', { host: 'held-answer', timeout_ms: 30_000 }, { timeout: 45_000 }).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    await waitFor(() => held.calls()[before], { what: 'the call sent to the agent' });
    const ended = await fetch(fleet.broker.mcpUrl, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(ended.status).toBe(200);
    // Told now: not the call's own deadline 30 s on (a deadline_exceeded result), nor the client's timeout (a timed-out request).
    expect(await pending).toMatch(/session ended before this request was answered.*whether a change it asked for took effect is unknown/);
    await caller.close().catch(() => {});
  });

  it('sends the answer of a call it took before it closes, and takes no new connection meanwhile', async () => {
    const token = await identityToken(fleet.broker, 0);
    const caller = await mcpClient(fleet.broker, token);
    const url = fleet.broker.mcpUrl;
    const before = held.calls().length;
    // Answered only once the broker has begun to stop: a broker that closed its sessions first would leave it unanswered.
    const pending = call(caller, 'agent_info', { host: 'held-answer', timeout_ms: 30_000 }, { timeout: 45_000 });
    const sent = await waitFor(() => held.calls()[before], { what: 'the call sent to the agent' });

    const restarted = fleet.restartBroker();
    await waitFor(
      async () =>
        fetch(url, { method: 'POST' }).then(
          () => false,
          () => true,
        ),
      { what: 'the stopping broker refusing new connections' },
    );
    held.answer(sent.callId, {
      agent_id: held.agentId,
      name: 'held-answer',
      version: 'rogue',
      protocol_version: 1,
      uptime_s: 1,
      started_at_unix_ms: Date.now(),
      collectors: [],
      labels: {},
      facts: {},
      sample: null,
      certificate_not_after_unix_ms: Date.now() + 60_000,
    });
    const result = await pending;
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ host: 'held-answer', availability: 'available' });
    await restarted;
    await caller.close().catch(() => {});
  });
});
