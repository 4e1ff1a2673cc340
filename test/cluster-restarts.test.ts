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

interface EnvelopeNode {
  host: string;
  errors: { code: string }[];
  availability: string;
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
   * - every call gets an answer; one may fail only when the broker it went
   *   through stopped under it, and the same call sent again then succeeds
   *   (through the next broker);
   * - a change (set_agent_labels) the client saw succeed is in the audit as
   *   ok, and no audit row of the run is left pending;
   * - in a fleet-wide read, an agent that is moving between brokers may answer
   *   agent_offline or agent_disconnected, and nothing else; every agent is
   *   back online after each restart and the last read reaches all of them.
   */
  it('loses no call while a, b and c are restarted one after another', async () => {
    const client = await relay([cluster.mcpUrl.a, cluster.mcpUrl.b, cluster.mcpUrl.c], token);
    const restarting = new Set<BrokerName>();
    const failures: { call: number; during: BrokerName[]; error: string }[] = [];
    const acknowledged: string[] = [];
    const hostErrors = new Set<string>();
    let calls = 0;
    let rolling = true;
    const callOnce = async (n: number): Promise<CallToolResult> =>
      (await client.callTool(
        n % 2 ? { name: 'set_agent_labels', arguments: { host: AGENTS[n % AGENTS.length], labels: { n: String(n) } } } : { name: 'agent_info', arguments: {} },
      )) as CallToolResult;
    const loop = (async () => {
      for (let n = 0; rolling; n++) {
        calls += 1;
        let result: CallToolResult;
        try {
          result = await callOnce(n);
        } catch (error) {
          failures.push({ call: n, during: [...restarting], error: (error as Error).message });
          result = await callOnce(n);
        }
        if (n % 2) {
          expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
          acknowledged.push(String(n));
        } else {
          for (const node of (result.structuredContent as { hosts: EnvelopeNode[] }).hosts) for (const error of node.errors) hostErrors.add(error.code);
        }
      }
    })();
    for (const name of ['a', 'b', 'c'] as const) {
      const before = calls;
      restarting.add(name);
      await cluster.stopBroker(name);
      await cluster.startBroker(name);
      restarting.delete(name);
      await fleetBack(cluster);
      // The client kept calling through this restart.
      await waitFor(() => calls >= before + 4, { what: 'calls through the restart' });
    }
    rolling = false;
    await loop;

    for (const failure of failures) expect(failure.during.length, `call ${failure.call} failed outside a restart: ${failure.error}`).toBe(1);
    expect(failures.length).toBeLessThanOrEqual(3);
    expect([...hostErrors].filter((code) => !['agent_offline', 'agent_disconnected'].includes(code))).toEqual([]);
    const last = (await client.callTool({ name: 'agent_info', arguments: {} })) as CallToolResult & { structuredContent: Record<string, unknown> };
    expect(last.structuredContent).toMatchObject({ targeted: AGENTS.length, responded: AGENTS.length });
    await client.close();

    const rows = await live(cluster).store.audit.recent({ limit: 1000, identity: 'roller' });
    expect(rows.filter((row) => row.outcome === 'pending')).toEqual([]);
    const ok = new Set(rows.filter((row) => row.outcome === 'ok').map((row) => (row.arguments.labels as Record<string, string>).n));
    expect(acknowledged.filter((n) => !ok.has(n))).toEqual([]);
  });

  it('keeps a stdio relay given several brokers calling through the next when its broker is killed', async () => {
    const client = await relay([cluster.mcpUrl.b, cluster.mcpUrl.a], token);
    const info = async () => (await client.callTool({ name: 'agent_info', arguments: { host: 'r-a' } })).structuredContent;
    expect(await info()).toMatchObject({ host: 'r-a', availability: 'available' });
    cluster.b.signal('SIGKILL');
    await cluster.b.exited;
    expect(await info()).toMatchObject({ host: 'r-a', availability: 'available' });
    expect(await info()).toMatchObject({ host: 'r-a', availability: 'available' });
    await client.close();
  });
});
