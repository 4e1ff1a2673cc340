import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

describe('MCP over Streamable HTTP', () => {
  let fleet: TestFleet;
  let token: string;
  let url: URL;
  beforeAll(async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('web-1');
    token = await identityToken(fleet.broker, 1);
    url = new URL(fleet.broker.mcpUrl);
  });
  afterAll(async () => {
    await fleet.stop();
  });

  const post = (headers: Record<string, string>, body = INITIALIZE) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });

  it('answers 401 with WWW-Authenticate to a request without a token, or with a wrong one', async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="fleetmesh", resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    const wrong = await post({ authorization: `Bearer fmc1.0000000000000000.${'x'.repeat(43)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/error="invalid_token", error_description="the token is not known"/);
    // Both say where a working token comes from.
    for (const refused of [none, wrong]) {
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/npm start.*fleetmesh identity create NAME --level/);
    }
  });

  it('serves the protected resource metadata document', async () => {
    const response = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ resource: url.href, bearer_methods_supported: ['header'] });
  });

  it('refuses a DNS rebinding attempt (foreign Host or Origin) with 403, and accepts loopback names', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const rebinding = await post({ ...auth, host: 'evil.example.com', origin: 'http://evil.example.com' });
    expect(rebinding.status).toBe(403);
    const badOrigin = await post({ ...auth, origin: 'http://evil.example.com' });
    expect(badOrigin.status).toBe(403);
    const ok = await post({ ...auth, host: `localhost:${url.port}`, origin: `http://localhost:${url.port}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toBeTruthy();
  });

  it('answers 404 for an unknown session and for one that was closed', async () => {
    const unknown = await post(
      { authorization: `Bearer ${token}`, 'mcp-session-id': 'no-such-session' },
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    );
    expect(unknown.status).toBe(404);
    const client = await mcpClient(fleet.broker, token);
    const transport = client.transport as unknown as { sessionId: string; terminateSession(): Promise<void> };
    const sessionId = transport.sessionId;
    await transport.terminateSession();
    await client.close();
    const closed = await post({ authorization: `Bearer ${token}`, 'mcp-session-id': sessionId }, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    expect(closed.status).toBe(404);
  });

  it('keeps a session to the identity that opened it', async () => {
    const client = await mcpClient(fleet.broker, token);
    const sessionId = (client.transport as unknown as { sessionId: string }).sessionId;
    const other = await identityToken(fleet.broker, 3);
    const hijack = await post(
      { authorization: `Bearer ${other}`, 'mcp-session-id': sessionId },
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }),
    );
    expect(hijack.status).toBe(403);
    await client.close();
  });

  it('refuses a revoked identity at its next request', async () => {
    const revocable = await identityToken(fleet.broker, 1, undefined, 'revocable');
    const client = await mcpClient(fleet.broker, revocable);
    const row = await fleet.broker.store.identities.findLiveByName('revocable');
    await fleet.broker.store.identities.revoke(row?.id ?? '', Date.now());
    await expect(client.listTools()).rejects.toThrow(/401|Unauthorized/);
    await client.close().catch(() => {});
  });

  it('opens a standalone notification stream (GET) for a session', async () => {
    const opened = await post({ authorization: `Bearer ${token}` });
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    await opened.text();
    const headers = { authorization: `Bearer ${token}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const initialized = await post(headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    expect(initialized.status).toBe(202);
    const controller = new AbortController();
    const stream = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: controller.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    // Only one standalone stream per session.
    const second = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(second.status).toBe(409);
    controller.abort();
    await fetch(url, { method: 'DELETE', headers });
  });

  it("holds a session's requests to Streamable HTTP's rules; a quick answer is one JSON body, one with progress an event stream", async () => {
    const auth = { authorization: `Bearer ${token}` };
    const jsonOnly = await post({ ...auth, accept: 'application/json' });
    expect(jsonOnly.status).toBe(406);
    const notJson = await post({ ...auth, 'content-type': 'text/plain' });
    expect(notJson.status).toBe(415);

    const opened = await post(auth);
    expect(opened.headers.get('content-type')).toBe('application/json');
    const sessionId = opened.headers.get('mcp-session-id') ?? '';
    expect(await opened.json()).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
    const headers = { ...auth, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    expect((await post(headers, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status).toBe(202);

    const again = await post(headers);
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: { message: string } }).error.message).toMatch(/already initialized/);
    const unknownVersion = await post({ ...headers, 'mcp-protocol-version': '1999-01-01' }, JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }));
    expect(unknownVersion.status).toBe(400);
    const notRpc = await post(headers, JSON.stringify({ hello: 'world' }));
    expect(notRpc.status).toBe(400);
    const broken = await post(headers, '{"jsonrpc": ');
    expect(broken.status).toBe(400);

    const batch = await post(
      headers,
      JSON.stringify([
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
        { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'agent_info', arguments: { host: 'web-1' } } },
      ]),
    );
    expect(batch.status).toBe(200);
    expect(batch.headers.get('content-type')).toBe('application/json');
    const answers = (await batch.json()) as { id: string; result: { structuredContent?: unknown } }[];
    expect(answers.map((answer) => answer.id)).toEqual(['a', 'b']);
    expect(answers[1]?.result.structuredContent).toMatchObject({ host: 'web-1', availability: 'available' });

    // Asked for progress, the call is answered on an event stream: its progress events, then its answer.
    const withProgress = await post(
      headers,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'c',
        method: 'tools/call',
        params: { name: 'agent_info', arguments: { host: 'web-1' }, _meta: { progressToken: 'p1' } },
      }),
    );
    expect(withProgress.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = (await withProgress.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { id?: string; method?: string; params?: { progressToken?: string } });
    expect(events.at(-1)).toMatchObject({ id: 'c', result: { structuredContent: { host: 'web-1' } } });
    expect(events.slice(0, -1).length).toBeGreaterThan(0);
    expect(events.slice(0, -1).every((e) => e.method === 'notifications/progress' && e.params?.progressToken === 'p1')).toBe(true);

    expect((await fetch(url, { method: 'DELETE', headers })).status).toBe(200);
    expect((await post(headers, JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'ping' }))).status).toBe(404);
  });
});
