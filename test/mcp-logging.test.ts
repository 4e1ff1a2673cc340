import { LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { mcpClientV2 } from './harness/mcp-client-v2.ts';
import { type RogueAgent, startRogueAgent } from './harness/rogue-agent.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

interface Note {
  level: string;
  message: string;
  host?: string;
}

describe('log notifications about a client’s own calls', () => {
  let fleet: TestFleet;
  let slow: RogueAgent;
  beforeAll(async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('log-ok');
    slow = await startRogueAgent(fleet, 'log-slow', { collectors: ['agent'] });
  });
  afterAll(async () => {
    slow.close();
    await fleet.stop();
  });

  it('tells the calling session that a host missed the deadline and then answered late, at the level it set, and tells no other identity', async () => {
    const caller = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const bystander = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    const heard: Note[] = [];
    const overheard: Note[] = [];
    caller.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      heard.push({ level: n.params.level, ...(n.params.data as { message: string; host?: string }) });
    });
    bystander.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      overheard.push({ level: n.params.level, ...(n.params.data as { message: string }) });
    });
    try {
      await caller.setLoggingLevel('info');
      await bystander.setLoggingLevel('debug');
      const before = slow.calls().length;
      const result = await call(caller, 'agent_info', { hosts: ['log-ok', 'log-slow'], timeout_ms: 1000 });
      expect(result.structuredContent).toMatchObject({ targeted: 2, responded: 1 });
      expect(heard).toContainEqual(expect.objectContaining({ level: 'warning', host: 'log-slow', message: 'log-slow did not answer: deadline_exceeded' }));

      const sent = slow.calls()[before];
      if (!sent) throw new Error('the slow host was never called');
      slow.answer(sent.callId, {});
      await waitFor(() => heard.some((n) => n.level === 'notice'), { what: 'the late answer told to the caller' });
      expect(heard.find((n) => n.level === 'notice')?.message).toMatch(/^log-slow answered .* past the call's 1000 ms deadline$/);
      expect(heard.every((n) => n.host !== 'log-ok')).toBe(true);

      // Raised to warning, the session hears no notice of the next late answer.
      await caller.setLoggingLevel('warning');
      const notices = heard.filter((n) => n.level === 'notice').length;
      const next = slow.calls().length;
      await call(caller, 'agent_info', { hosts: ['log-slow'], timeout_ms: 1000 });
      const again = slow.calls()[next];
      if (!again) throw new Error('the slow host was not called again');
      slow.answer(again.callId, {});
      // A call afterwards is answered after the late note would have been sent on the same session.
      await call(caller, 'agent_info', { host: 'log-ok' });
      expect(heard.filter((n) => n.level === 'notice').length).toBe(notices);
      expect(overheard).toEqual([]);
    } finally {
      await caller.close();
      await bystander.close();
    }
  });

  it('sends a 2026-07-28 request its log notes while the call is in flight', async () => {
    const client = await mcpClientV2(fleet.broker, await identityToken(fleet.broker, 0));
    const heard: Note[] = [];
    client.setNotificationHandler('notifications/message', (n) => {
      heard.push({ level: n.params.level, ...(n.params.data as { message: string }) });
    });
    try {
      // 2026-07-28 has no logging/setLevel: each request carries the level it wants.
      await client.callTool({
        name: 'agent_info',
        arguments: { hosts: ['log-ok', 'log-slow'], timeout_ms: 1000 },
        _meta: { [LOG_LEVEL_META_KEY]: 'info' },
      });
      expect(heard).toContainEqual(expect.objectContaining({ level: 'warning', message: 'log-slow did not answer: deadline_exceeded' }));
    } finally {
      await client.close();
    }
  });
});
