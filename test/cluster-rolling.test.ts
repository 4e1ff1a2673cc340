import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../broker/broker.ts';
import { FLEETMESH_BIN } from './harness/cli-process.ts';
import { identityToken } from './harness/mcp-client.ts';
import { type BrokerName, startTestCluster, type TestCluster } from './harness/test-cluster.ts';
import { waitFor } from './harness/wait.ts';

/**
 * The full run (FLEETMESH_FULL_ROLLING=1): 200 agents and 20 MCP clients; CI
 * runs a shortened one, the same restarts under fewer of each.
 */
const FULL = process.env.FLEETMESH_FULL_ROLLING === '1';
const AGENTS = FULL ? 200 : 12;
const HTTP_CLIENTS = FULL ? 15 : 4;
const RELAYED_CLIENTS = FULL ? 5 : 2;
const BROKERS: BrokerName[] = ['a', 'b', 'c'];
/** Calls every client makes through each restart before the next broker stops. */
const CALLS_PER_RESTART = FULL ? 10 : 4;
/** A broker stopping in order answers what it took within its stop grace (25 s) and moves its agents (10 s): SIGKILL only after both. */
const STOP_WAIT_MS = 45_000;

/** What became of the calls of one client. */
interface Tally {
  answered: number;
  /** Refused before any broker handled them (the broker stopping, or gone): sent again through another. */
  refusedUnhandled: number;
  /** Neither answered nor refused: what the test counts and must find none of. */
  lost: string[];
}

/**
 * A call refused unhandled, which a client sends again elsewhere: 503 from a
 * stopping broker, 404 for a session it no longer has, no broker listening,
 * or its connection closed before any answer began. A stopping broker refuses
 * every new request unhandled and answers those it took before it closes a
 * connection, so one closed before an answer began carried a request it never
 * handled: an idle keep-alive connection closed just as the client sent on it,
 * the race HTTP/1.1 leaves to clients. An answer cut off once begun is not
 * this: the call would wait, and be counted lost.
 */
function refusedUnhandled(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 503 || error.code === 404;
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (/ECONNREFUSED|Session not found/.test(cause.message) || code === 'ECONNREFUSED' || code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return true;
  }
  return false;
}

/** An error's message and those of its causes, for the report of a lost call. */
function causes(error: unknown): string {
  const messages: string[] = [];
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    messages.push(`${cause.message}${(cause as NodeJS.ErrnoException).code ? ` (${(cause as NodeJS.ErrnoException).code})` : ''}`);
  return messages.join(': ');
}

/**
 * An MCP client calling on and on, as a user's client would: over Streamable
 * HTTP to one broker, moving to the next when its broker refuses it
 * unhandled, or through a `fleetmesh stdio` relay given every broker.
 */
class CallingClient {
  readonly tally: Tally = { answered: 0, refusedUnhandled: 0, lost: [] };
  private client: Client | undefined;
  private turn: number;
  private running = true;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly cluster: TestCluster,
    private readonly token: string,
    private readonly index: number,
    private readonly relayed: boolean,
  ) {
    this.turn = index % BROKERS.length;
  }

  get calls(): number {
    return this.tally.answered + this.tally.lost.length;
  }

  /** Calls one after another; a relayed client two at a time, as a model sending tool calls in parallel does. */
  start(): void {
    const lanes = this.relayed ? 2 : 1;
    this.loop = Promise.all(
      Array.from({ length: lanes }, (_, lane) =>
        (async () => {
          for (let n = lane; this.running; n += lanes) await this.callOnce(n);
        })(),
      ),
    )
      .then(() => undefined)
      .catch(() => undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.client?.close().catch(() => undefined);
  }

  private async connect(): Promise<Client> {
    const client = new Client({ name: `rolling-${this.index}`, version: '1' });
    if (this.relayed) {
      const urls = BROKERS.map((_, i) => this.cluster.mcpUrl[BROKERS[(this.turn + i) % BROKERS.length] as BrokerName]);
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: [FLEETMESH_BIN, 'stdio', '--url', urls.join(','), '--token', this.token], stderr: 'pipe' }),
      );
      return client;
    }
    // The next broker that takes the session.
    for (let attempt = 0; ; attempt++) {
      const name = BROKERS[(this.turn + attempt) % BROKERS.length] as BrokerName;
      const attemptClient = attempt === 0 ? client : new Client({ name: `rolling-${this.index}`, version: '1' });
      try {
        await attemptClient.connect(
          new StreamableHTTPClientTransport(new URL(this.cluster.mcpUrl[name]), { requestInit: { headers: { Authorization: `Bearer ${this.token}` } } }),
        );
        this.turn = BROKERS.indexOf(name);
        return attemptClient;
      } catch (error) {
        if (!this.running) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  private connecting: Promise<Client> | undefined;

  private async callOnce(n: number): Promise<void> {
    if (!this.client) {
      this.connecting ??= this.connect().finally(() => {
        this.connecting = undefined;
      });
      this.client = await this.connecting;
    }
    const client = this.client;
    const host = `roll-${(this.index * 7 + n) % AGENTS}`;
    const call =
      n % 2 ? { name: 'set_agent_labels', arguments: { host, labels: { by: String(this.index), n: String(n) } } } : { name: 'agent_info', arguments: { host } };
    try {
      // An answer, error results included (an agent between two brokers, an outcome unknown), is what a client must get.
      await client.callTool(call, undefined, { timeout: 60_000 });
      this.tally.answered += 1;
    } catch (error) {
      if (!this.relayed && refusedUnhandled(error)) {
        this.tally.refusedUnhandled += 1;
        if (this.client === client) {
          this.client = undefined;
          this.turn = (this.turn + 1) % BROKERS.length;
        }
        void client.close().catch(() => undefined);
        return;
      }
      this.tally.lost.push(`${call.name} ${host}: ${causes(error)}`);
    }
  }
}

/** A broker of the cluster that is running now, in process. */
function live(cluster: TestCluster): Broker {
  return cluster.running('a') ? cluster.a : cluster.c;
}

describe('a cluster restarted broker by broker under calling clients', () => {
  let cluster: TestCluster;
  let token: string;
  const clients: CallingClient[] = [];

  beforeAll(async () => {
    cluster = await startTestCluster();
    for (let i = 0; i < AGENTS; i++) await cluster.addAgent(`roll-${i}`, BROKERS[i % BROKERS.length] as BrokerName);
    token = await identityToken(cluster.a, 3, undefined, 'rolling');
  }, 600_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.stop()));
    await cluster?.stop();
  });

  it(`answers every call of ${HTTP_CLIENTS + RELAYED_CLIENTS} clients while each of three brokers is stopped (SIGTERM) and started again in turn, over ${AGENTS} agents`, async () => {
    for (let i = 0; i < HTTP_CLIENTS + RELAYED_CLIENTS; i++) clients.push(new CallingClient(cluster, token, i, i >= HTTP_CLIENTS));
    for (const client of clients) client.start();
    const progressed = async (what: string) => {
      const before = clients.map((client) => client.calls);
      await waitFor(() => clients.every((client, i) => client.calls >= (before[i] ?? 0) + CALLS_PER_RESTART), { timeoutMs: 120_000, what });
    };
    await progressed('calls before the first restart');
    for (const name of BROKERS) {
      await cluster.stopBroker(name, STOP_WAIT_MS);
      await progressed(`calls while ${name} is down`);
      await cluster.startBroker(name);
      await waitFor(
        () =>
          live(cluster)
            .registry.list()
            .filter((host) => host.state === 'online').length === AGENTS,
        {
          timeoutMs: 120_000,
          what: `every agent online after ${name} restarted`,
        },
      );
      await progressed(`calls after ${name} restarted`);
    }
    await Promise.all(clients.map((client) => client.stop()));
    const lost = clients.flatMap((client) => client.tally.lost);
    expect(lost).toEqual([]);
    expect(clients.every((client) => client.tally.answered > 3 * CALLS_PER_RESTART)).toBe(true);
  }, 900_000);
});
