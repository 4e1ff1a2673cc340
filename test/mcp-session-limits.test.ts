import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
});

/** A broker whose identities may each hold this many sessions (the default is 64; fewer keeps the flood small). */
const PER_IDENTITY = 5;

describe('MCP sessions per identity', () => {
  let fleet: TestFleet;
  let url: URL;
  beforeAll(async () => {
    fleet = await startTestFleet({ mcpSessionLimits: { perIdentity: PER_IDENTITY, idleMs: 10 * 60_000 } });
    await fleet.addAgent('limits-1');
    url = new URL(fleet.broker.mcpUrl);
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  const post = (token: string, body: string, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });

  it("refuses a flood of sessions from one identity past its limit, saying so, while another identity's call goes through", async () => {
    const flooder = await identityToken(fleet.broker, 0, undefined, 'flooder');
    const answers = await Promise.all(Array.from({ length: 30 }, () => post(flooder, INITIALIZE)));
    const opened = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect([opened.length, refused.length]).toEqual([PER_IDENTITY, 30 - PER_IDENTITY]);
    const refusal = (await refused[0]?.json()) as { error: { code: number; message: string } };
    expect(refusal.error.message).toMatch(
      /^Too many sessions: identity "flooder" already has 5 MCP sessions open on this broker.*DELETE \/mcp.*--mcp-sessions-per-identity/,
    );
    expect(refused[0]?.headers.get('retry-after')).toBe('60');
    for (const answer of [...opened, ...refused.slice(1)]) await answer.body?.cancel();

    // A real client of that identity is told the same.
    await expect(mcpClient(fleet.broker, flooder)).rejects.toThrow(/Too many sessions: identity .+flooder.+ already has 5/);

    // Another identity is not held back by it.
    const admin = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3, undefined, 'limits-admin'));
    const result = await call(admin, 'agent_info', { host: 'limits-1' });
    expect(result.structuredContent).toMatchObject({ host: 'limits-1', availability: 'available' });
    await admin.close();

    // A session ended by its client makes room for another.
    const ending = opened[0]?.headers.get('mcp-session-id') ?? '';
    const deleted = await fetch(url, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${flooder}`, 'mcp-session-id': ending, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(deleted.status).toBe(200);
    const again = await post(flooder, INITIALIZE);
    expect(again.status).toBe(200);
    await again.body?.cancel();
  });

  it('ends the notification stream of a session whose identity is revoked', async () => {
    const token = await identityToken(fleet.broker, 1, undefined, 'revoked-listener');
    const opened = await post(token, INITIALIZE);
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    await opened.body?.cancel();
    const headers = { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    expect((await post(token, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers)).status).toBe(202);
    const stream = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const reader = stream.body?.getReader();
    let ended = false;
    void (async () => {
      while (!(await reader?.read())?.done) {}
      ended = true;
    })().catch(() => {
      ended = true;
    });
    const row = await fleet.broker.store.identities.findLiveByName('revoked-listener');
    await fleet.broker.store.identities.revoke(row?.id ?? '', Date.now());
    await waitFor(() => ended, { what: 'the revoked identity’s stream to end' });
    expect(fleet.broker.mcp.liveSessions().some((session) => session.identity.name === 'revoked-listener')).toBe(false);
  });
});
