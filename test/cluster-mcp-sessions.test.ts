import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../agent/agent.ts';
import type { Broker } from '../broker/broker.ts';
import { brokerProcessArgs, enrolledAgentProcess } from './harness/broker-process.ts';
import { CliProcess, runFleetmesh } from './harness/cli-process.ts';
import { freePort } from './harness/free-port.ts';
import { call, identityToken, readJson } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestCluster, type TestCluster } from './harness/test-cluster.ts';
import { waitFor } from './harness/wait.ts';

/**
 * An SDK 1.x client whose requests go wherever `target` says now, as one
 * address in front of several brokers sends them, and which keeps what it
 * sent: the JSON-RPC methods it posted and the brokers that opened its
 * notification stream (GET).
 */
async function movableClient(first: string, token: string) {
  let target = first;
  const posted: string[] = [];
  const streamsOpened: string[] = [];
  const client = new Client({ name: 'session-mover', version: '1' });
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updated.push(notification.params.uri);
  });
  const transport = new StreamableHTTPClientTransport(new URL(first), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    // The notification stream comes back as soon as a broker answers again, however long that takes.
    reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 1000 },
    fetch: async (_url, init) => {
      const to = target;
      if (init?.method === 'POST' && typeof init.body === 'string') {
        const body = JSON.parse(init.body) as { method?: string } | { method?: string }[];
        for (const message of Array.isArray(body) ? body : [body]) if (message.method) posted.push(message.method);
      }
      const response = await fetch(to, init);
      if (init?.method === 'GET' && response.ok) streamsOpened.push(to);
      return response;
    },
  });
  await client.connect(transport);
  return {
    client,
    posted,
    streamsOpened,
    updated,
    get sessionId() {
      return transport.sessionId;
    },
    moveTo(url: string) {
      target = url;
    },
  };
}

/** The HTTP status of a ping naming the session, sent with that bearer token. */
async function status(url: string, token: string, sessionId: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'mcp-session-id': sessionId,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  await response.body?.cancel();
  return response.status;
}

describe('MCP sessions shared by the brokers of a cluster', () => {
  let cluster: TestCluster;
  let token: string;
  let watched: Agent;

  beforeAll(async () => {
    cluster = await startTestCluster();
    watched = await cluster.addAgent('watched', 'a');
    token = await identityToken(cluster.a, 1, undefined, 'mover');
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  it('continues a session on another broker when its broker is killed, and tells it of a resource it subscribed to there, without a new initialize', async () => {
    const mover = await movableClient(cluster.mcpUrl.b, token);
    const sessionId = mover.sessionId;
    await mover.client.subscribeResource({ uri: 'fleet://agents/watched' });
    await mover.client.setLoggingLevel('warning');
    await waitFor(() => mover.streamsOpened.includes(cluster.mcpUrl.b), { what: 'the notification stream open on b' });
    // What the store keeps of the session: nothing secret, enough to serve it elsewhere.
    const stored = await waitFor(async () => {
      const row = await cluster.a.store.mcpSessions.get(sessionId ?? '', 0);
      return row?.logLevel === 'warning' && row.subscriptions.length === 1 ? row : undefined;
    });
    expect(stored).toMatchObject({ subscriptions: ['fleet://agents/watched'], clientInfo: { name: 'session-mover' } });
    expect(JSON.stringify(stored)).not.toContain(token);

    cluster.b.signal('SIGKILL');
    await cluster.b.exited;
    mover.moveTo(cluster.mcpUrl.a);
    const listed = await call(mover.client, 'list_agents');
    expect(listed.isError).toBeFalsy();
    expect(mover.sessionId).toBe(sessionId);
    await waitFor(() => mover.streamsOpened.includes(cluster.mcpUrl.a), { what: 'the notification stream open again, on a' });
    expect((await cluster.a.store.mcpSessions.get(sessionId ?? '', 0))?.heldBy).not.toBe(stored.heldBy);
    // What changed while no broker served the session is unknown: a tells each subscription once.
    await waitFor(() => mover.updated.includes('fleet://agents/watched'), { what: 'the catch-up update' });
    mover.updated.length = 0;

    // The watched agent goes away: a tells the subscription the client made on b.
    await watched.stop();
    await waitFor(() => mover.updated.includes('fleet://agents/watched'), { what: 'the update of the subscription made on b' });
    expect((await readJson(mover.client, 'fleet://agents/watched')).state).toBe('offline');
    expect(mover.posted.filter((method) => method === 'initialize')).toHaveLength(1);
    await mover.client.close();
  });

  it('refuses a session id sent with another identity (403) or unknown (404), serves a session on one broker at a time, and ends it for all on DELETE', async () => {
    const ownToken = await identityToken(cluster.a, 1, undefined, 'one-at-a-time');
    const mover = await movableClient(cluster.mcpUrl.a, ownToken);
    const sessionId = mover.sessionId ?? '';
    expect(await status(cluster.mcpUrl.c, await identityToken(cluster.a, 3, undefined, 'thief'), sessionId)).toBe(403);
    expect(await status(cluster.mcpUrl.c, ownToken, 'no-such-session')).toBe(404);
    const onBroker = (broker: Broker) => broker.mcp.liveSessions().filter((session) => session.identity.name === 'one-at-a-time').length;
    expect(onBroker(cluster.a)).toBe(1);

    // The client's address now leads to c: c serves the session, and a closes its copy.
    mover.moveTo(cluster.mcpUrl.c);
    await call(mover.client, 'list_agents');
    expect(onBroker(cluster.c)).toBe(1);
    await waitFor(() => onBroker(cluster.a) === 0, { what: 'a to close the session c took over' });

    // Ended by the client: no broker serves it again.
    await (mover.client.transport as StreamableHTTPClientTransport).terminateSession();
    await mover.client.close();
    expect(await status(cluster.mcpUrl.a, ownToken, sessionId)).toBe(404);
  });
});

describe('MCP sessions of a single broker on SQLite', () => {
  const processes: CliProcess[] = [];
  const temp = makeTempDir();
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    temp.remove();
  });

  it('continues a session after the broker restarts, subscriptions included', async () => {
    const dataDir = join(temp.path, 'broker');
    const args = brokerProcessArgs(dataDir, { mcpPort: String(await freePort()) });
    const first = new CliProcess(args);
    processes.push(first);
    const mcpUrl = (await first.waitForOutput(/mcp=(http:\/\/\S+\/mcp)/))[1] as string;
    const token = JSON.parse((await runFleetmesh(['identity', 'create', 'restarter', '--level', '1', '--data-dir', dataDir, '--output', 'json'])).stdout).token;
    const mover = await movableClient(mcpUrl, token);
    const sessionId = mover.sessionId;
    await mover.client.subscribeResource({ uri: 'fleet://status' });
    await waitFor(() => mover.streamsOpened.length === 1, { what: 'the notification stream open' });

    first.signal('SIGKILL');
    await first.exited;
    const again = new CliProcess(args);
    processes.push(again);
    const grpcPort = (await again.waitForOutput(/grpc=127\.0\.0\.1:(\d+)/))[1] as string;
    expect((await call(mover.client, 'list_agents')).isError).toBeFalsy();
    expect(mover.sessionId).toBe(sessionId);
    await waitFor(() => mover.streamsOpened.length === 2, { what: 'the notification stream open again' });
    await waitFor(() => mover.updated.includes('fleet://status'), { what: 'the catch-up update' });
    mover.updated.length = 0;

    // An agent joins: the restarted broker tells the subscription made before the restart.
    const agent = await enrolledAgentProcess(['--data-dir', dataDir], grpcPort, 'joiner', join(temp.path, 'agent'));
    processes.push(agent);
    await waitFor(() => mover.updated.includes('fleet://status'), { what: 'the update of the subscription made before the restart' });
    expect(mover.posted.filter((method) => method === 'initialize')).toHaveLength(1);
    await mover.client.close();
  });
});
