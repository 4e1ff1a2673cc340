import dns from 'node:dns';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker } from '../broker/broker.ts';
import { FLEETMESH_BIN } from './harness/cli-process.ts';
import { identityToken } from './harness/mcp-client.ts';
import { type BrokerName, startTestCluster, type TestCluster } from './harness/test-cluster.ts';
import { waitFor } from './harness/wait.ts';

const AGENTS = ['r-a', 'r-b', 'r-c', 'r-a2'] as const;
/** What a host answers while its agent is between two brokers. */
const MOVING = ['agent_offline', 'agent_disconnected'];

interface EnvelopeNode {
  host: string;
  errors: { code: string }[];
  availability: string;
}

/** An error result saying the call may have run: its answer was lost, or it was cancelled as its broker stopped. */
function outcomeUnknown(result: CallToolResult): boolean {
  return result.isError === true && (result.structuredContent as { error?: { outcome?: string } } | undefined)?.error?.outcome === 'unknown';
}

/** A `fleetmesh stdio` relay given every broker of the cluster, as an MCP client would run it. */
async function relay(urls: string[], token: string): Promise<Client> {
  const client = new Client({ name: 'cluster-relay-test', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [FLEETMESH_BIN, 'stdio', '--url', urls.join(','), '--token', token], stderr: 'pipe' }),
  );
  return client;
}

/** The broker that answers for the cluster now: one of the in-process ones that is running. */
function live(cluster: TestCluster): Broker {
  return cluster.running('a') ? cluster.a : cluster.c;
}

async function fleetBack(cluster: TestCluster): Promise<void> {
  await waitFor(
    () => {
      const broker = live(cluster);
      return AGENTS.every((name) => broker.registry.find(name)?.state === 'online');
    },
    { what: 'every agent online again' },
  );
}

describe('a cluster through restarts of its brokers', () => {
  let cluster: TestCluster;
  let token: string;

  beforeAll(async () => {
    cluster = await startTestCluster();
    await cluster.addAgent('r-a', 'a');
    await cluster.addAgent('r-b', 'b');
    await cluster.addAgent('r-c', 'c');
    await cluster.addAgent('r-a2', 'a');
    token = await identityToken(cluster.a, 3, undefined, 'roller');
  });

  afterAll(async () => {
    await cluster?.stop();
  });

  /*
   * What "no call lost" means here, call by call, for a client that keeps
   * calling through the stdio relay while a, b and c are restarted one after
   * another (each the orderly way: it tells its agents to move, then stops):
   * - every call gets an answer, except at most one per restart (the broker
   *   it went through stopped under it), and that call sent again succeeds
   *   (through the next broker);
   * - a change (set_agent_labels) either succeeds, and is in the audit as
   *   ok, or is refused because its agent is between two brokers
   *   (agent_offline: it was never sent; agent_disconnected: its stream was
   *   closed before it answered), and is in the audit as an error; no audit
   *   row of the run is left pending;
   * - in a fleet-wide read, an agent that is moving between brokers may answer
   *   agent_offline or agent_disconnected, and nothing else; every agent is
   *   back online after each restart and the last read reaches all of them.
   */
  it('loses no call while a, b and c are restarted one after another', async () => {
    const client = await relay([cluster.mcpUrl.a, cluster.mcpUrl.b, cluster.mcpUrl.c], token);
    const failures: { call: number; error: string }[] = [];
    const acknowledged: string[] = [];
    const refusedWhileMoving: string[] = [];
    const hostErrors = new Set<string>();
    let loopError: unknown;
    let calls = 0;
    let rolling = true;
    const callOnce = async (n: number): Promise<CallToolResult> =>
      (await client.callTool(
        n % 2 ? { name: 'set_agent_labels', arguments: { host: AGENTS[n % AGENTS.length], labels: { n: String(n) } } } : { name: 'agent_info', arguments: {} },
      )) as CallToolResult;
    const loop = (async () => {
      for (let n = 0; rolling && loopError === undefined; n++) {
        calls += 1;
        let result: CallToolResult;
        try {
          result = await callOnce(n);
        } catch (error) {
          failures.push({ call: n, error: (error as Error).message });
          result = await callOnce(n);
        }
        // The relay lost the answer as its broker stopped under the call, and said the outcome is unknown: send it again.
        if (outcomeUnknown(result)) {
          failures.push({ call: n, error: JSON.stringify(result.structuredContent) });
          result = await callOnce(n);
        }
        if (n % 2) {
          const codes = ((result.structuredContent as { errors?: { code: string }[] }).errors ?? []).map((error) => error.code);
          if (!result.isError) acknowledged.push(String(n));
          else if (codes.every((code) => MOVING.includes(code))) refusedWhileMoving.push(String(n));
          else throw new Error(`change ${n} failed: ${JSON.stringify(result.structuredContent)}`);
        } else {
          for (const node of (result.structuredContent as { hosts: EnvelopeNode[] }).hosts) for (const error of node.errors) hostErrors.add(error.code);
        }
      }
    })().catch((error: unknown) => {
      loopError = error;
    });
    for (const name of ['a', 'b', 'c'] as const) {
      const before = calls;
      await cluster.stopBroker(name);
      await cluster.startBroker(name);
      await fleetBack(cluster);
      // The client kept calling through this restart.
      // A call sent as a broker stops can wait out its deadline on a host that is moving: allow a few.
      await waitFor(() => calls >= before + 4 || loopError !== undefined, { timeoutMs: 60_000, what: `calls through the restart of ${name}` }).catch(
        (error: unknown) => {
          throw new Error(`${(error as Error).message}: ${calls - before} calls since it began, failures ${JSON.stringify(failures)}`);
        },
      );
      if (loopError !== undefined) break;
    }
    rolling = false;
    await loop;
    expect(loopError).toBeUndefined();

    // At most one call per restart failed (its broker stopped under it), and each succeeded when sent again.
    expect(failures.length, JSON.stringify(failures)).toBeLessThanOrEqual(3);
    // None waited out the client's timeout: a stopping broker answers what it took before it closes.
    expect(failures.filter((failure) => /timed out/i.test(failure.error))).toEqual([]);
    expect([...hostErrors].filter((code) => !MOVING.includes(code))).toEqual([]);
    expect(acknowledged.length).toBeGreaterThan(refusedWhileMoving.length);
    // Once the last agents have settled on a broker, a fleet-wide read through the relay reaches every one.
    await waitFor(
      async () => {
        const last = (await client.callTool({ name: 'agent_info', arguments: {} })) as CallToolResult & { structuredContent: Record<string, unknown> };
        return last.structuredContent.targeted === AGENTS.length && last.structuredContent.responded === AGENTS.length;
      },
      { what: 'a fleet-wide read reaching every agent after the restarts', intervalMs: 500 },
    );
    await client.close();

    const rows = await live(cluster).store.audit.recent({ limit: 1000, identity: 'roller' });
    expect(rows.filter((row) => row.outcome === 'pending')).toEqual([]);
    // Oldest first: a change sent again after its broker stopped under it ends with its last row.
    const outcomes = new Map(rows.reverse().map((row) => [(row.arguments.labels as Record<string, string>).n, row.outcome]));
    expect(acknowledged.filter((n) => outcomes.get(n) !== 'ok')).toEqual([]);
    expect(refusedWhileMoving.filter((n) => outcomes.get(n) !== 'error')).toEqual([]);
  }, 180_000);

  it('keeps a stdio relay given several brokers calling through the next when its broker is killed', async () => {
    const client = await relay([cluster.mcpUrl.b, cluster.mcpUrl.a], token);
    // An agent online on a or c once the restarts above settled: it answers through whichever broker the relay reaches.
    const target = await waitFor(
      () =>
        AGENTS.find((name) => {
          const host = cluster.a.registry.find(name);
          return host?.state === 'online' && host.session !== undefined && host.session.heldBy !== 'b';
        }),
      { what: 'an online agent held by a or c' },
    );
    const info = async () =>
      (await client.callTool({ name: 'agent_info', arguments: { host: target } })).structuredContent as Record<string, unknown> | undefined;
    await waitFor(async () => (await info())?.availability === 'available' || undefined, { what: `${target} answering through the relay` });
    cluster.b.signal('SIGKILL');
    await cluster.b.exited;
    // The calls right after go through the next broker and are answered for the host. A broker left
    // holding the whole fleet evens it out, and may move the target just then: it is between two
    // brokers for a moment, which the answer says, and nothing else may go wrong.
    for (let n = 0; n < 2; n++) {
      const answer = await info();
      expect(answer).toMatchObject({ host: target });
      if (answer?.availability !== 'available') {
        const codes = ((answer?.errors ?? []) as { code: string }[]).map((error) => error.code);
        expect(codes.length, JSON.stringify(answer)).toBeGreaterThan(0);
        expect(codes.filter((code) => !MOVING.includes(code))).toEqual([]);
      }
    }
    await waitFor(async () => (await info())?.availability === 'available' || undefined, { what: `${target} answering through the next broker` });
    await client.close();
  });

  it('evens out the agents when a broker joins: the busiest ask some of theirs to move to it', async () => {
    // b is down (killed above): a and c share the fleet, twelve more agents first dialling a.
    for (let i = 1; i <= 12; i++) await cluster.addAgent(`m-${i}`, 'a', { dial: `${cluster.address.a},${cluster.address.c}` });
    const counts = () => {
      const held = { a: 0, b: 0, c: 0 } as Record<BrokerName, number>;
      for (const host of cluster.a.registry.list()) {
        if (host.session && host.state === 'online') held[(host.session.heldBy ?? 'a') as BrokerName] += 1;
      }
      return held;
    };
    await cluster.startBroker('b');
    // The m-* agents were never told b's address: only the brokers' own announcements can send them there.
    await waitFor(() => counts().b >= 3, { what: `agents moved to b (held: ${JSON.stringify(counts())})`, timeoutMs: 40_000 });
    await waitFor(() => Object.values(counts()).reduce((sum, n) => sum + n, 0) === AGENTS.length + 12, { what: 'every agent online' });
    // A broker moves its surplus a batch at a time, a few beats apart, so the spread is checked once
    // the moves have settled: no broker above another by more than a move's worth.
    await waitFor(
      () => {
        const held = counts();
        const values = Object.values(held);
        if (values.reduce((sum, n) => sum + n, 0) !== AGENTS.length + 12 || Math.max(...values) - Math.min(...values) > 4) {
          throw new Error(`held: ${JSON.stringify(held)}`);
        }
        return true;
      },
      { what: 'the agents evened out over a, b and c', timeoutMs: 30_000 },
    );
  }, 180_000);

  it('lets a call in flight on an agent of a broker shutting down finish before the agent moves', async () => {
    await cluster.addAgent('drained', 'c', { dial: `${cluster.address.c},${cluster.address.a}` });
    await waitFor(() => cluster.a.registry.find('drained')?.session?.heldBy === 'c', { what: 'drained held by c' });
    const client = new Client({ name: 'drain-test', version: '1' });
    await client.connect(
      new (await import('@modelcontextprotocol/sdk/client/streamableHttp.js')).StreamableHTTPClientTransport(new URL(cluster.mcpUrl.a), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    try {
      // Through a, to the agent c holds: a read that takes six seconds, while c shuts down the orderly way.
      const answer = client.callTool({ name: 'agent_info', arguments: { host: 'drained', watch_ms: 6000, interval_ms: 500 } });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const stopping = cluster.stopBroker('c');
      // An agent that only knows c and dials it while c waits for that call is sent on at once, not held until c closes.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await cluster.addAgent('late', 'c', { dial: cluster.address.c });
      expect(['a', 'b']).toContain(cluster.a.registry.find('late')?.session?.heldBy ?? 'a');
      const result = (await answer) as CallToolResult & { structuredContent: EnvelopeNode };
      expect(result.structuredContent).toMatchObject({ host: 'drained', availability: 'available', errors: [] });
      await stopping;
      await waitFor(() => cluster.a.registry.find('drained')?.state === 'online' && cluster.a.registry.find('drained')?.session?.heldBy !== 'c', {
        what: 'drained moved to another broker',
      });
    } finally {
      await client.close();
      await cluster.startBroker('c');
    }
  }, 60_000);

  it('sends the agents of a broker shutting down to another broker, though they were only ever given its address', async () => {
    await cluster.addAgent('only-c', 'c', { dial: cluster.address.c });
    await waitFor(() => cluster.a.registry.find('only-c')?.session?.heldBy === 'c', { what: 'only-c held by c' });
    await cluster.stopBroker('c');
    try {
      await waitFor(
        () => {
          const host = cluster.a.registry.find('only-c');
          return host?.state === 'online' && host.session !== undefined && host.session.heldBy !== 'c';
        },
        // c may first give the MCP answers under way its stop grace (25 s), then moves its agents.
        { what: 'only-c held by a or b while c is down', timeoutMs: 45_000 },
      );
    } finally {
      await cluster.startBroker('c');
    }
  }, 90_000);

  it('answers a call through the stdio relay whose broker is killed under it with an error result saying its outcome is unknown', async () => {
    const client = await relay([cluster.mcpUrl.b, cluster.mcpUrl.a], token);
    try {
      // An agent of its own that knows only a: after the restarts above, every agent of the fleet may be held by b.
      const target = 'relayed';
      await cluster.addAgent(target, 'a', { dial: cluster.address.a });
      await waitFor(
        () => {
          const host = cluster.a.registry.find(target);
          return host?.state === 'online' && host.session !== undefined && host.session.heldBy !== 'b';
        },
        { what: `${target} online, held by a or c` },
      );
      // b learns of the fleet over the bus, a moment after a does: the host must answer through b (the relay's first broker)
      // before the call b is killed under, or b answers at once that it is offline.
      await waitFor(async () => ((await client.callTool({ name: 'agent_info', arguments: { host: target } })) as CallToolResult).isError !== true, {
        what: `${target} answered through b`,
      });
      let sent: () => void = () => {};
      const underWay = new Promise<void>((resolve) => {
        sent = resolve;
      });
      // Through b, a read that watches for half a minute: b is killed once it has sent it to the host.
      const answer = client.callTool({ name: 'agent_info', arguments: { host: target, watch_ms: 30_000, interval_ms: 1000 } }, undefined, {
        onprogress: () => sent(),
        timeout: 25_000,
      });
      await underWay;
      cluster.b.signal('SIGKILL');
      await cluster.b.exited;
      const result = (await answer) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'unavailable', outcome: 'unknown' } });
      expect(JSON.stringify(result.content)).toMatch(/whether it took effect is unknown/);
      // The relay has moved to the next broker: the next call is answered for the host.
      const next = (await client.callTool({ name: 'agent_info', arguments: { host: target } })) as CallToolResult;
      expect(next.structuredContent).toMatchObject({ host: target });
    } finally {
      await client.close();
      await cluster.startBroker('b');
    }
  }, 90_000);
});

describe('an agent given one name that resolves to every broker', () => {
  const NAME = 'brokers.fleetmesh.test';
  let cluster: TestCluster;
  const lookup = dns.lookup;
  const lookupPromise = dns.promises.lookup;
  /** b's address first, then a's and c's: what a name with several A records resolves to. */
  const RECORDS = [
    { address: '127.0.0.2', family: 4 },
    { address: '127.0.0.1', family: 4 },
    { address: '127.0.0.3', family: 4 },
  ];

  beforeAll(async () => {
    // This process's resolver (gRPC's, and the one TLS connections use at enrollment) answers the name; others as always.
    dns.promises.lookup = (async (hostname: string, options?: dns.LookupAllOptions) =>
      hostname === NAME ? RECORDS : lookupPromise(hostname, options as dns.LookupAllOptions)) as typeof dns.promises.lookup;
    dns.lookup = ((hostname: string, options: unknown, callback?: unknown) => {
      const done = (typeof options === 'function' ? options : callback) as (error: Error | null, address: unknown, family?: number) => void;
      const all = typeof options === 'object' && options !== null && (options as dns.LookupOptions).all === true;
      if (hostname !== NAME) return typeof options === 'function' ? lookup(hostname, done) : lookup(hostname, options as dns.LookupOptions, done);
      if (all) done(null, RECORDS);
      else done(null, RECORDS[0]?.address, 4);
    }) as typeof dns.lookup;
    cluster = await startTestCluster({ grpcHosts: { a: '127.0.0.1', b: '127.0.0.2', c: '127.0.0.3' }, advertiseNames: [NAME] });
  });

  afterAll(async () => {
    await cluster?.stop();
    dns.lookup = lookup;
    dns.promises.lookup = lookupPromise;
  });

  it('reaches another broker through the same name when its broker is killed', async () => {
    await cluster.addAgent('by-name', 'a', { dial: cluster.address.a });
    expect(cluster.address.a).toBe(cluster.address.c);
    expect(cluster.a.registry.find('by-name')?.session?.heldBy).toBe('b');
    cluster.b.signal('SIGKILL');
    await waitFor(
      () => {
        const host = cluster.a.registry.find('by-name');
        return host?.state === 'online' && host.session?.heldBy !== 'b';
      },
      { what: 'the agent online again on a or c' },
    );
  });
});
