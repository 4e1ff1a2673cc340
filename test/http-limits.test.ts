import { Agent, request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { brokerAddresses, brokerProcessArgs } from './harness/broker-process.ts';
import { CliProcess } from './harness/cli-process.ts';
import { ConnectFlood } from './harness/connect-flood.ts';
import { identityToken } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
}

/**
 * One request through `agent` (keep-alive, one socket: a request after
 * another reuses its connection when the server keeps it open). Resolves with
 * the answer, or with the error when the connection was cut before it; fails
 * when no answer comes in 10 s, as on a connection the server left unread.
 */
function send(
  url: string,
  agent: Agent | false,
  options: { method?: string; headers?: Record<string, string | number>; body?: Buffer } = {},
): Promise<Answer | string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s: the request hung')));
    req.on('error', (error) => (/hung/.test(error.message) ? reject(error) : resolve(error.message)));
    req.end(options.body);
  });
}

describe('a body too large on a keep-alive connection', () => {
  let fleet: TestFleet;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  beforeAll(async () => {
    fleet = await startTestFleet({ webListen: '127.0.0.1:0' });
  });
  afterAll(async () => {
    agent.destroy();
    await fleet?.stop();
  });

  it("is answered 413 on /mcp and the connection closed: the client's next request is answered", async () => {
    const token = await identityToken(fleet.broker, 1);
    const base = new URL(fleet.broker.mcpUrl);
    const refused = await send(base.href, agent, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: Buffer.alloc(5 * 1024 * 1024, ' '),
    });
    if (typeof refused !== 'string') {
      expect(refused).toMatchObject({ status: 413, connection: 'close' });
      expect(JSON.parse(refused.body).error.message).toMatch(/larger than 4 MiB.*Send a smaller request/);
    }
    expect(await send(new URL('/healthz', base).href, agent)).toMatchObject({ status: 200, body: '{"status":"ok"}\n' });
  });

  it("is answered 413 by the web console and the connection closed: the client's next request is answered", async () => {
    const base = `http://127.0.0.1:${fleet.broker.web?.port}`;
    const refused = await send(`${base}/api/session`, agent, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.alloc(2 * 1024 * 1024, ' '),
    });
    if (typeof refused !== 'string') expect(refused).toMatchObject({ status: 413, connection: 'close' });
    expect(await send(`${base}/api/session`, agent)).toMatchObject({ status: 401 });
  });
});

describe('a flood of unfinished HTTP connections from one address', () => {
  const dir = makeTempDir();
  let broker: CliProcess | undefined;
  let flood: ConnectFlood | undefined;
  afterEach(async () => {
    await flood?.stop();
    await broker?.stop();
  });
  afterAll(() => dir.remove());

  it('leaves /healthz answering another address, on a broker with 1,024 descriptors', async () => {
    // The broker may open 1,024 descriptors: more connections than that would starve its accept, its store and its agents.
    broker = new CliProcess(brokerProcessArgs(dir.path), { prefix: ['prlimit', '--nofile=1024:1024', '--'] });
    const { mcpUrl } = await brokerAddresses(broker);
    const base = new URL(mcpUrl);
    // Each connection sends the start of a request and no more, and is held until the broker closes it.
    flood = ConnectFlood.start({
      port: Number(base.port),
      from: '127.0.0.2',
      perSecond: 2000,
      maxOpen: 1500,
      send: `GET /healthz HTTP/1.1\r\nHost: ${base.host}\r\n`,
    });
    // Enough to take every descriptor of the broker, unless it closed most; or the broker stopped taking any.
    await waitFor(() => (flood?.counts.connects ?? 0) >= 3000 || (flood?.counts.failed ?? 0) > 0, { what: '3,000 flood connections' });
    expect(await send(new URL('/healthz', base).href, false)).toMatchObject({ status: 200, body: '{"status":"ok"}\n' });
    // The broker closed what it would not hold, rather than keep the flood's connections.
    expect(flood.counts.closed_by_server).toBeGreaterThan(0);
    expect(broker.exitCode).toBeUndefined();
  });
});
