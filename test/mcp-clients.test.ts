import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../shared/catalog/catalog.ts';
import { FLEETMESH_BIN, runFleetmesh } from './harness/cli-process.ts';
import { everyDomainCollectors } from './harness/every-domain-collectors.ts';
import { identityToken, readJson } from './harness/mcp-client.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const run = promisify(execFile);
const INSPECTOR = fileURLToPath(new URL('../node_modules/@modelcontextprotocol/inspector/cli/build/cli.js', import.meta.url));

describe('real MCP clients', () => {
  let fleet: TestFleet;
  let token: string;
  beforeAll(async () => {
    fleet = await startTestFleet({ operationsLevel: 2 });
    await fleet.addAgent('web-1', { labels: { role: 'web' }, collectors: everyDomainCollectors() });
    await fleet.addAgent('db-1', { labels: { role: 'db' } });
    token = await identityToken(fleet.broker, 2);
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('the Inspector CLI lists the tools and calls one', async () => {
    const base = [INSPECTOR, '--cli', fleet.broker.mcpUrl, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    const listed = await run(process.execPath, [...base, '--method', 'tools/list']);
    const tools = JSON.parse(listed.stdout.slice(listed.stdout.indexOf('{'))).tools as { name: string }[];
    expect(tools.map((t) => t.name).sort()).toEqual(
      CATALOG.filter((a) => a.level <= 2)
        .map((a) => a.tool)
        .sort(),
    );
    const called = await run(process.execPath, [...base, '--method', 'tools/call', '--tool-name', 'agent_info', '--tool-arg', 'host=db-1']);
    const result = JSON.parse(called.stdout.slice(called.stdout.indexOf('{')));
    expect(result.structuredContent).toMatchObject({ host: 'db-1', availability: 'available', labels: { role: 'db' } });
  });

  it("fleetmesh stdio writes a call's progress before its result, with the client's progress token", async () => {
    // Read on the wire: the SDK client runs notification handlers a microtask after it takes a
    // response read in the same chunk, so under load it can drop progress the relay did send first.
    const relay = spawn(process.execPath, [FLEETMESH_BIN, 'stdio', '--url', fleet.broker.mcpUrl, '--token', token], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      const messages: Record<string, unknown>[] = [];
      const lines = createInterface({ input: relay.stdout });
      lines.on('line', (line) => messages.push(JSON.parse(line) as Record<string, unknown>));
      const send = (message: Record<string, unknown>) => relay.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
      send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'wire', version: '1' } } });
      await waitFor(() => messages.some((m) => m.id === 1), { what: 'the relay to answer initialize' });
      send({ method: 'notifications/initialized' });
      send({ id: 2, method: 'tools/call', params: { name: 'agent_info', arguments: { selector: 'role=web' }, _meta: { progressToken: 'p-1' } } });
      await waitFor(() => messages.some((m) => m.id === 2), { what: 'the relay to answer tools/call' });
      const answered = messages.findIndex((m) => m.id === 2);
      const progress = messages
        .slice(0, answered)
        .filter((m) => m.method === 'notifications/progress')
        .map((m) => m.params as { progressToken: string; progress: number });
      expect(progress.map((p) => [p.progressToken, p.progress])).toEqual([
        ['p-1', 0],
        ['p-1', 1],
      ]);
      expect(messages.slice(answered + 1).filter((m) => m.method === 'notifications/progress')).toEqual([]);
    } finally {
      relay.kill();
    }
  });

  it('fleetmesh stdio relays a stdio client to the broker', async () => {
    const client = new Client({ name: 'stdio-test', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [FLEETMESH_BIN, 'stdio', '--url', fleet.broker.mcpUrl, '--token', token], stderr: 'pipe' }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('agent_info');
    const result = await client.callTool({ name: 'agent_info', arguments: { selector: 'role=web' } });
    expect(result.structuredContent).toMatchObject({ targeted: 1, responded: 1, hosts: [{ host: 'web-1' }] });
    expect(await readJson(client, 'fleet://agents/web-1')).toMatchObject({ name: 'web-1', state: 'online' });
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('investigate_host');
    await client.close();
  });

  it('fleetmesh stdio outlives a broker restart: a new session, the same subscriptions, no failed call', async () => {
    const client = new Client({ name: 'stdio-restart-test', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [FLEETMESH_BIN, 'stdio', '--url', fleet.broker.mcpUrl, '--token', token], stderr: 'pipe' }),
    );
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updated.push(notification.params.uri);
    });
    await client.subscribeResource({ uri: 'fleet://agents' });
    expect((await client.callTool({ name: 'agent_info', arguments: { host: 'web-1' } })).structuredContent).toMatchObject({ host: 'web-1' });

    await fleet.restartBroker();
    // The first call after the restart already goes through, on a session the relay opened by itself.
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('agent_info');
    await waitFor(() => fleet.broker.registry.find('web-1')?.state === 'online', { what: 'web-1 back online' });
    const after = await client.callTool({ name: 'agent_info', arguments: { host: 'web-1' } });
    expect(after.structuredContent).toMatchObject({ host: 'web-1', availability: 'available' });
    // The new session carries the client's subscription: a new agent is announced.
    updated.length = 0;
    await fleet.addAgent('spare-1', { labels: { role: 'spare' } });
    await waitFor(() => updated.includes('fleet://agents'), { what: 'fleet://agents updated after the restart' });
    await client.close();
  });

  it('fleetmesh call runs a tool with per-host progress, exits non-zero on an error, and ends its session each time', async () => {
    const caller = await identityToken(fleet.broker, 2, undefined, 'cli-caller');
    const env = { FLEETMESH_MCP_URL: fleet.broker.mcpUrl, FLEETMESH_MCP_TOKEN: caller };
    const table = await runFleetmesh(['call', 'agent_info', '--selector', 'role=db'], { env });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/\| `db-1` \| `available` \|/);
    expect(table.stderr).toMatch(/\[0\/1\] sent to 1 host\n\[1\/1\] db-1: answered/);
    // What a host streams is printed as it arrives, before the host's answer.
    const watched = await runFleetmesh(['call', 'agent_info', '--host', 'db-1', '--json', '{"watch_ms":600,"interval_ms":200}'], { env });
    expect(watched.code).toBe(0);
    expect(watched.stderr).toMatch(/\[0\/1\] db-1: uptime_s=\d+, sample: [^\n]+\n(.*\n)*\[1\/1\] db-1: answered/);
    const json = await runFleetmesh(['call', 'set_agent_labels', '--host', 'web-1', '--json', '{"labels":{"tier":"front"}}', '--output', 'json'], { env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ host: 'web-1', labels: { role: 'web', tier: 'front' } });
    const failed = await runFleetmesh(['call', 'agent_info', '--host', 'nowhere'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/not_found/);
    // Each call ended its session (DELETE): none is left counting against the identity's limit.
    expect(fleet.broker.mcp.liveSessions().filter((session) => session.identity.name === 'cli-caller')).toEqual([]);
  });

  it('fleetmesh call finds a tool name or an action id in fleet://actions on every surface', async () => {
    const seen: Record<string, unknown[]> = {};
    for (const surface of ['individual', 'meta', 'dynamic'] as const) {
      if (surface !== 'individual') {
        await fleet.restartBroker({ toolSurface: surface });
        await waitFor(
          () => {
            const hosts = fleet.broker.registry.list();
            return hosts.length >= 2 && hosts.every((h) => h.state === 'online');
          },
          { what: 'every agent back online' },
        );
      }
      const env = { FLEETMESH_MCP_URL: fleet.broker.mcpUrl, FLEETMESH_MCP_TOKEN: await identityToken(fleet.broker, 2) };
      const [status, info, byId, unknown] = await Promise.all([
        runFleetmesh(['call', 'get_fleet_status', '--output', 'json'], { env }),
        runFleetmesh(['call', 'agent_info', '--host', 'web-1', '--output', 'json'], { env }),
        runFleetmesh(['call', 'agent.info', '--host', 'db-1', '--arg', 'interval_ms=500', '--output', 'json'], { env }),
        runFleetmesh(['call', 'get_fleet_stats'], { env }),
      ]);
      seen[surface] = [status.code, info.code, byId.code, unknown.code];
      expect(JSON.parse(status.stdout)).toMatchObject({ counts: { total: fleet.broker.registry.list().length }, not_online: expect.any(Array) });
      expect(JSON.parse(info.stdout)).toMatchObject({ host: 'web-1', availability: 'available' });
      expect(JSON.parse(byId.stdout)).toMatchObject({ host: 'db-1', availability: 'available' });
      expect(unknown.stderr).toMatch(/offers no action "get_fleet_stats".*Closest: get_fleet_status/);
    }
    expect(seen).toEqual({ individual: [0, 0, 0, 1], meta: [0, 0, 0, 1], dynamic: [0, 0, 0, 1] });
  });
});
