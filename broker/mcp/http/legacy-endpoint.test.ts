import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { agentInfoOf, type LinkedFleet, startLinkedFleet } from '../../../test/harness/linked-fleet.ts';
import type { McpHttpServer } from './mcp-http-server.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const PING = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });

describe('2025-era sessions (LegacyEndpoint)', () => {
  let fleet: LinkedFleet;
  let server: McpHttpServer;
  beforeEach(async () => {
    fleet = await startLinkedFleet();
    await fleet.addHost('web-1', [agentInfoOf('web-1')]);
    server = await fleet.serveMcp({ sessionLimits: { perIdentity: 2, idleMs: 10 * 60_000 } });
  });
  afterEach(() => fleet.stop());

  const send = (token: string, method: string, body?: string, headers: Record<string, string> = {}) =>
    fetch(server.url, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      ...(body === undefined ? {} : { body }),
    });
  const errorOf = async (answer: Response) => ((await answer.json()) as { error: { code: number; message: string } }).error;

  /** A session opened and initialized, as a client leaves it: its id. */
  async function open(token: string): Promise<string> {
    const opened = await send(token, 'POST', INITIALIZE);
    expect(opened.status).toBe(200);
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    await opened.text();
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    expect((await send(token, 'POST', JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers)).status).toBe(202);
    return sessionId;
  }

  it('opens a session with an initialize POST, and refuses anything else that names no session', async () => {
    const token = await fleet.token(0);
    const get = await send(token, 'GET');
    expect([get.status, (await errorOf(get)).message]).toEqual([400, 'Bad request: no Mcp-Session-Id; open a session with an initialize POST']);
    const broken = await send(token, 'POST', '{"jsonrpc": ');
    expect([broken.status, await errorOf(broken)]).toEqual([400, { code: -32700, message: 'Parse error: the body is not JSON' }]);
    const ping = await send(token, 'POST', PING);
    expect([ping.status, (await errorOf(ping)).message]).toEqual([400, 'Bad request: no Mcp-Session-Id; open a session with initialize first']);
    expect(await open(token)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 404 for an unknown or deleted session, and 403 for another identity's", async () => {
    const token = await fleet.token(0);
    const headers = (sessionId: string) => ({ 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' });
    const unknown = await send(token, 'POST', PING, headers('no-such-session'));
    expect([unknown.status, await errorOf(unknown)]).toEqual([
      404,
      { code: -32001, message: 'Session not found: it was closed, expired or never existed; start a new one with initialize' },
    ]);
    const sessionId = await open(token);
    const hijack = await send(await fleet.token(3), 'POST', PING, headers(sessionId));
    expect([hijack.status, (await errorOf(hijack)).message]).toEqual([403, 'Forbidden: this session belongs to another identity']);
    expect((await send(token, 'POST', PING, headers(sessionId))).status).toBe(200);
    expect((await send(token, 'DELETE', undefined, headers(sessionId))).status).toBe(200);
    expect((await send(token, 'POST', PING, headers(sessionId))).status).toBe(404);
  });

  it('holds an identity to its sessions: past the limit a new one is refused 429 saying what to do, until one is deleted', async () => {
    const token = await fleet.token(0, undefined, 'busy');
    const first = await open(token);
    await open(token);
    const refused = await send(token, 'POST', INITIALIZE);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect((await errorOf(refused)).message).toMatch(
      /^Too many sessions: identity "busy" already has 2 MCP sessions open on this broker.*DELETE \/mcp.*10 minutes.*--mcp-sessions-per-identity/,
    );
    // Another identity is not held back.
    await open(await fleet.token(0));
    await send(token, 'DELETE', undefined, { 'mcp-session-id': first, 'mcp-protocol-version': '2025-06-18' });
    await open(token);
    expect(server.liveSessions().filter((session) => session.identity.name === 'busy')).toHaveLength(2);
  });
});
