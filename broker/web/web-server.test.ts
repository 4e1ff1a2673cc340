import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log/logger.ts';
import { createIdentity } from '../auth/identities.ts';
import { Broker } from '../broker.ts';
import { inProcessBrokerOptions } from '../broker-options.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with the headers given verbatim (fetch would not let a test set Host or Origin). */
function send(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the web console server', () => {
  let root: string;
  let broker: Broker;
  let port: number;
  let adminToken: string;

  async function signIn(token: string): Promise<{ cookie: string; csrf: string }> {
    const answer = await send(
      port,
      'POST',
      '/api/session',
      { 'content-type': 'application/json', origin: `http://127.0.0.1:${port}` },
      JSON.stringify({ token }),
    );
    expect(answer.status).toBe(200);
    const cookie = String(answer.headers['set-cookie']).split(';')[0] ?? '';
    return { cookie, csrf: (JSON.parse(answer.body) as { csrf_token: string }).csrf_token };
  }

  function callTool(session: { cookie: string; csrf: string }, tool: string, args: Record<string, unknown>, headers: Record<string, string> = {}) {
    return send(
      port,
      'POST',
      '/api/call',
      { 'content-type': 'application/json', cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf, ...headers },
      JSON.stringify({ tool, args }),
    );
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'fm-web-'));
    mkdirSync(join(root, 'web'));
    writeFileSync(join(root, 'web', 'index.html'), '<!doctype html><title>console</title>');
    broker = await Broker.start(
      inProcessBrokerOptions(join(root, 'broker'), { webListen: '127.0.0.1:0', webAssetsDir: join(root, 'web'), operationsLevel: 3 }),
      silentLogger,
    );
    port = broker.web?.port ?? 0;
    adminToken = (await createIdentity(broker.store, { name: 'web-admin', level: 3 })).token;
  });

  afterAll(async () => {
    await broker?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves the console with a strict Content-Security-Policy', async () => {
    const page = await send(port, 'GET', '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<title>console</title>');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
    expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect((await send(port, 'GET', '/../broker/fleetmesh.db')).status).toBe(404);
  });

  it('refuses a wrong token, and audits the refusal', async () => {
    const answer = await send(port, 'POST', '/api/session', { 'content-type': 'application/json' }, JSON.stringify({ token: 'fmc1.nope.nope' }));
    expect(answer.status).toBe(401);
    expect(answer.headers['set-cookie']).toBeUndefined();
    const refused = await broker.store.audit.recent({ limit: 10, refused: true });
    expect(refused.map((r) => r.tool)).toContain('/api/session');
  });

  it('keeps the session in an HttpOnly, SameSite=Strict cookie named after its port, that holds no token', async () => {
    const answer = await send(port, 'POST', '/api/session', { 'content-type': 'application/json' }, JSON.stringify({ token: adminToken }));
    const cookie = String(answer.headers['set-cookie']);
    expect(cookie).toMatch(new RegExp(`^fleetmesh_session_${port}=[\\w-]{43}; Path=/; HttpOnly; SameSite=Strict; Max-Age=\\d+$`));
    expect(cookie).not.toContain(adminToken);
    expect((await send(port, 'GET', '/api/session')).status).toBe(401);
  });

  it('gives a listener on another port of the host nothing it can use the console cookie for', async () => {
    const session = await signIn(adminToken);
    // Browsers send a host's cookies to each of its ports: a listener on another port of 127.0.0.1 is handed the console's.
    const handed: string[] = [];
    const foreign = createServer((req, res) => {
      handed.push(req.headers.cookie ?? '');
      res.end();
    });
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    try {
      const foreignPort = (foreign.address() as AddressInfo).port;
      await send(foreignPort, 'GET', '/', { cookie: session.cookie });
      const stolen = handed[0] ?? '';
      expect(stolen).toBe(session.cookie);
      // Replayed to the console as it came, under the console's Origin (anyone but a browser can forge it), or under the listener's own.
      for (const origin of [undefined, `http://127.0.0.1:${port}`, `http://127.0.0.1:${foreignPort}`]) {
        const headers: Record<string, string> = { cookie: stolen, ...(origin ? { origin } : {}) };
        const me = await send(port, 'GET', '/api/session', headers);
        expect([401, 403], String(origin)).toContain(me.status);
        expect(me.body).not.toContain(session.csrf);
        expect((await send(port, 'GET', '/api/audit', headers)).status).not.toBe(200);
        expect((await send(port, 'GET', '/api/events', headers)).status).not.toBe(200);
        const restart = await callTool({ cookie: stolen, csrf: '' }, 'docker_restart', { host: 'web-1', name: 'db' }, origin ? { origin } : {});
        expect(restart.status, String(origin)).toBe(403);
      }
      // The page itself, which holds the CSRF token sign-in gave it, still reads its session.
      const own = await send(port, 'GET', '/api/session', { cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf });
      expect(own.status).toBe(200);
      expect(JSON.parse(own.body)).toMatchObject({ identity: 'web-admin' });
      expect(own.body).not.toContain('csrf');
    } finally {
      await new Promise((resolve) => foreign.close(resolve));
    }
  });

  it('runs a call through the runner only with the CSRF token, from the same origin and host', async () => {
    const session = await signIn(adminToken);
    const ok = await callTool(session, 'get_fleet_status', {});
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ structured: { healthy: true }, is_error: false });

    expect((await callTool(session, 'get_fleet_status', {}, { 'x-fleetmesh-csrf': 'forged' })).status).toBe(403);
    const crossSite = await callTool(session, 'get_fleet_status', {}, { origin: 'http://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toMatch(/Origin/);
    expect((await callTool(session, 'get_fleet_status', {}, { host: 'evil.example' })).status).toBe(403);
  });

  it('refuses a call on an agent that does not exist, and writes the refusal to the audit', async () => {
    const session = await signIn(adminToken);
    const answer = JSON.parse((await callTool(session, 'revoke_agent', { host: 'nobody' })).body) as { error: { code: string } };
    expect(answer.error.code).toBe('not_found');
    const rows = await broker.store.audit.recent({ limit: 5, identity: 'web-admin' });
    expect(rows[0]).toMatchObject({ tool: 'revoke_agent', outcome: 'refused' });
  });

  it("streams a call's progress as lines before its answer when the page asks for it, and answers one JSON body otherwise", async () => {
    const session = await signIn(adminToken);
    const streamed = await callTool(session, 'system_status', {}, { accept: 'application/x-ndjson' });
    expect(streamed.headers['content-type']).toBe('application/x-ndjson');
    const lines = streamed.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { progress?: { progress: number; message: string }; answer?: { structured: { targeted: number } } });
    expect(lines[0]?.progress?.message).toBe('sent to 0 hosts');
    expect(lines.at(-1)?.answer?.structured.targeted).toBe(0);
    const plain = await callTool(session, 'system_status', {});
    expect(plain.headers['content-type']).toBe('application/json');
    expect((JSON.parse(plain.body) as { structured: { targeted: number } }).structured.targeted).toBe(0);
    // Refused before it runs: one JSON body, whatever the page accepts.
    const refused = await callTool(session, 'no_such_tool', {}, { accept: 'application/x-ndjson' });
    expect(refused.headers['content-type']).toBe('application/json');
    expect((JSON.parse(refused.body) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('lets a level-3 identity create and revoke a join token, audited as the CLI audits it, and never with the token', async () => {
    const session = await signIn(adminToken);
    const headers = { 'content-type': 'application/json', cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf };
    const created = await send(port, 'POST', '/api/admin/tokens', headers, JSON.stringify({ uses: 2, ttl_hours: 2, labels: { role: 'web' } }));
    expect(created.status).toBe(200);
    const token = JSON.parse(created.body) as { token: string; token_id: string; agent_command: string; uses_allowed: number };
    expect(token.token).toMatch(/^fm1\./);
    expect(token.uses_allowed).toBe(2);
    expect(token.agent_command).toContain(`--token ${token.token} --ca-pin sha256:`);
    // Without the CSRF token the same request changes nothing.
    const { 'x-fleetmesh-csrf': _csrf, ...noCsrf } = headers;
    expect((await send(port, 'POST', `/api/admin/tokens/${token.token_id}/revoke`, noCsrf, '{}')).status).toBe(403);
    expect((await broker.store.tokens.get(token.token_id))?.revokedAt).toBeNull();
    expect((await send(port, 'POST', `/api/admin/tokens/${token.token_id}/revoke`, headers, '{}')).status).toBe(200);
    expect((await broker.store.tokens.get(token.token_id))?.revokedAt).not.toBeNull();
    const listed = JSON.parse((await send(port, 'GET', '/api/admin/tokens', headers)).body) as { rows: { token_id: string; status: string }[] };
    expect(listed.rows.find((row) => row.token_id === token.token_id)?.status).toBe('revoked');
    const rows = await broker.store.audit.recent({ limit: 5, identity: 'web-admin' });
    expect(rows.slice(0, 2).map((row) => [row.tool, row.outcome, row.targets])).toEqual([
      ['token revoke', 'ok', [`join-token:${token.token_id}`]],
      ['token create', 'ok', [`join-token:${token.token_id}`]],
    ]);
    expect(JSON.stringify(rows)).not.toContain(token.token);
  });

  it('refuses the admin screens to an identity below level 3 on the server, and audits the refusal', async () => {
    const operator = (await createIdentity(broker.store, { name: 'web-operator', level: 1 })).token;
    const session = await signIn(operator);
    const headers = { 'content-type': 'application/json', cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf };
    const before = (await broker.store.tokens.list()).length;
    expect((await send(port, 'POST', '/api/admin/tokens', headers, '{}')).status).toBe(404);
    expect((await send(port, 'GET', '/api/admin/identities', headers)).status).toBe(404);
    expect((await send(port, 'POST', '/api/admin/identities', headers, JSON.stringify({ name: 'sneaky', level: 3 }))).status).toBe(404);
    expect((await broker.store.tokens.list()).length).toBe(before);
    expect(await broker.store.identities.findLiveByName('sneaky')).toBeUndefined();
    const refused = await broker.store.audit.recent({ limit: 5, identity: 'web-operator', refused: true });
    expect(refused.map((row) => row.tool)).toContain('POST /api/admin/tokens');
  });

  it('lets a level-3 identity with every grant create and revoke an identity, and one with narrower grants create none', async () => {
    const session = await signIn(adminToken);
    const headers = { 'content-type': 'application/json', cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf };
    const created = await send(port, 'POST', '/api/admin/identities', headers, JSON.stringify({ name: 'web-ci', level: 1, grants: ['host:ci-*'] }));
    expect(created.status).toBe(200);
    const identity = JSON.parse(created.body) as { token: string; grants: string[] };
    expect(identity.grants).toEqual(['host:ci-*']);
    await signIn(identity.token);
    expect((await send(port, 'POST', '/api/admin/identities/web-ci/revoke', headers, '{}')).status).toBe(200);
    expect(await broker.store.identities.findLiveByName('web-ci')).toBeUndefined();
    const rows = await broker.store.audit.recent({ limit: 5, identity: 'web-admin' });
    expect(rows.slice(0, 2).map((row) => row.tool)).toEqual(['identity revoke', 'identity create']);
    expect(JSON.stringify(rows)).not.toContain(identity.token);

    const narrow = (await createIdentity(broker.store, { name: 'web-narrow', level: 3, grants: ['host:web-*'] })).token;
    const narrowSession = await signIn(narrow);
    const refused = await send(
      port,
      'POST',
      '/api/admin/identities',
      { 'content-type': 'application/json', cookie: narrowSession.cookie, 'x-fleetmesh-csrf': narrowSession.csrf },
      JSON.stringify({ name: 'web-wide', level: 3 }),
    );
    expect(refused.status).toBe(403);
    expect(await broker.store.identities.findLiveByName('web-wide')).toBeUndefined();
    const switchedOff = (await createIdentity(broker.store, { name: 'web-no-stop', level: 3, tools: { disable: ['docker_stop'], enable: [] } })).token;
    const switchedOffSession = await signIn(switchedOff);
    const alsoRefused = await send(
      port,
      'POST',
      '/api/admin/identities',
      { 'content-type': 'application/json', cookie: switchedOffSession.cookie, 'x-fleetmesh-csrf': switchedOffSession.csrf },
      JSON.stringify({ name: 'web-wide', level: 3 }),
    );
    expect(alsoRefused.status).toBe(403);
    expect(await broker.store.identities.findLiveByName('web-wide')).toBeUndefined();
  });

  it('shows a lower identity neither the audit log nor tools above its level', async () => {
    const reader = (await createIdentity(broker.store, { name: 'web-reader', level: 0 })).token;
    const session = await signIn(reader);
    const headers = { cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf };
    const me = JSON.parse((await send(port, 'GET', '/api/session', headers)).body) as { tools: { tool: string }[]; audit: boolean };
    expect(me.audit).toBe(false);
    expect(me.tools.map((t) => t.tool)).not.toContain('revoke_agent');
    expect((await send(port, 'GET', '/api/audit', headers)).status).toBe(404);
    const refused = JSON.parse((await callTool(session, 'revoke_agent', { host: 'x', confirm: true })).body) as { error: { code: string } };
    expect(refused.error.code).toBe('not_found');
  });

  it('audits a lower identity calling tools above it, as MCP does, and answers them as unknown tools', async () => {
    const session = await signIn((await createIdentity(broker.store, { name: 'web-climber', level: 0 })).token);
    for (const [tool, args] of [
      ['docker_stop', { host: 'web-1', name: 'db', confirm: true }],
      ['revoke_agent', { host: 'web-1', confirm: true }],
    ] as const) {
      const answer = JSON.parse((await callTool(session, tool, args)).body) as { error: { code: string; message: string } };
      expect(answer.error).toMatchObject({ code: 'not_found', message: `unknown tool: ${tool}` });
    }
    const unknown = JSON.parse((await callTool(session, 'no_such_tool', {})).body) as { error: { message: string } };
    expect(unknown.error.message).toBe('unknown tool: no_such_tool');
    const rows = await broker.store.audit.recent({ limit: 10, identity: 'web-climber', refused: true });
    expect(rows.map((r) => [r.tool, r.action, r.outcome, r.errorCode]).sort()).toEqual([
      ['docker_stop', 'docker.stop', 'refused', 'not_found'],
      ['revoke_agent', 'fleet.revoke_agent', 'refused', 'not_found'],
    ]);
    expect(rows.find((r) => r.tool === 'docker_stop')?.reason).toMatch(/above this identity's level 0/);
  });

  it('ends the sessions of a revoked identity', async () => {
    const { id, token } = await createIdentity(broker.store, { name: 'web-leaver', level: 1 });
    const session = await signIn(token);
    const headers = { cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf };
    expect((await send(port, 'GET', '/api/session', headers)).status).toBe(200);
    await broker.store.identities.revoke(id, Date.now());
    expect((await send(port, 'GET', '/api/session', headers)).status).toBe(401);
  });
});

describe('a web console that answers any Host (behind a proxy)', () => {
  let root: string;
  let broker: Broker;
  let port: number;
  let adminToken: string;

  async function signIn(headers: Record<string, string>): Promise<{ setCookie: string; cookie: string; csrf: string }> {
    const answer = await send(port, 'POST', '/api/session', { 'content-type': 'application/json', ...headers }, JSON.stringify({ token: adminToken }));
    expect(answer.status).toBe(200);
    const setCookie = String(answer.headers['set-cookie']);
    return { setCookie, cookie: setCookie.split(';')[0] ?? '', csrf: (JSON.parse(answer.body) as { csrf_token: string }).csrf_token };
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'fm-web-any-'));
    broker = await Broker.start(inProcessBrokerOptions(join(root, 'broker'), { webListen: '127.0.0.1:0', webAllowedHosts: ['*'] }), silentLogger);
    port = broker.web?.port ?? 0;
    adminToken = (await createIdentity(broker.store, { name: 'proxied-admin', level: 3 })).token;
  });
  afterAll(async () => {
    await broker?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('names the cookie __Host- and makes it Secure for a console served over HTTPS, and finds it only there', async () => {
    const https = { host: 'console.example', origin: 'https://console.example' };
    const session = await signIn(https);
    expect(session.setCookie).toMatch(/^__Host-fleetmesh_session=[\w-]{43}; Path=\/; Secure; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const headers = { cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf };
    expect((await send(port, 'GET', '/api/session', { ...headers, ...https })).status).toBe(200);
    expect((await send(port, 'GET', '/api/session', { ...headers, host: 'console.example' })).status).toBe(200);
    // The same cookie over plain HTTP, or for another host, names no session.
    expect((await send(port, 'GET', '/api/session', { ...headers, host: 'console.example', origin: 'http://console.example' })).status).toBe(401);
    expect((await send(port, 'GET', '/api/session', { ...headers, host: 'other.example', origin: 'https://other.example' })).status).toBe(401);
  });

  it('answers a session only on the port it was signed in on, even with its CSRF token', async () => {
    const session = await signIn({ host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` });
    const headers = { cookie: session.cookie, 'x-fleetmesh-csrf': session.csrf };
    expect((await send(port, 'GET', '/api/session', headers)).status).toBe(200);
    const foreign = `127.0.0.1:${port + 1}`;
    // The cookie under its own name, then under the name the other port's would have: the session remembers its origin.
    for (const cookie of [session.cookie, session.cookie.replace(`_${port}=`, `_${port + 1}=`)]) {
      const refused = await send(port, 'GET', '/api/session', { ...headers, cookie, host: foreign, origin: `http://${foreign}` });
      expect(refused.status, cookie).toBe(401);
      const call = await send(
        port,
        'POST',
        '/api/call',
        { ...headers, cookie, host: foreign, origin: `http://${foreign}`, 'content-type': 'application/json' },
        JSON.stringify({ tool: 'get_fleet_status', args: {} }),
      );
      expect(call.status, cookie).toBe(401);
    }
  });
});
