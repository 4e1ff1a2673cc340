import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerStore } from '../../broker/store/broker-store.ts';
import { brokerAddresses, brokerProcessArgs, enrolledAgentProcess } from '../harness/broker-process.ts';
import { CliProcess, runFleetmesh } from '../harness/cli-process.ts';
import { freePort } from '../harness/free-port.ts';
import { makeTempDir } from '../harness/temp-dir.ts';
import { waitFor } from '../harness/wait.ts';

const AGENTS = ['north', 'south', 'east'];

/**
 * A broker process, three agent processes, and a call in flight when the
 * broker is stopped or killed. Each test starts four processes and then waits
 * up to a minute for each of several steps: it gets three minutes in all.
 */
describe('a broker stopped or killed with agents mid-call', () => {
  const processes: CliProcess[] = [];
  const temps: ReturnType<typeof makeTempDir>[] = [];

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    for (const temp of temps.splice(0)) temp.remove();
  });

  async function startFleet() {
    const temp = makeTempDir();
    temps.push(temp);
    const dataDir = join(temp.path, 'broker');
    const brokerArgs = (grpcPort?: string, mcpPort?: string) =>
      brokerProcessArgs(dataDir, { level: 3, grpcPort, mcpPort, extra: ['--heartbeat-interval', '500ms'] });
    // Fixed ports from outside the kernel's ephemeral range: the restarted broker takes them again.
    const broker = new CliProcess(brokerArgs(String(await freePort()), String(await freePort())));
    processes.push(broker);
    const { mcpUrl, grpcPort } = await brokerAddresses(broker, 60_000);
    const mcpPort = new URL(mcpUrl).port;
    const identity = JSON.parse((await runFleetmesh(['identity', 'create', 'operator', '--level', '3', '--data-dir', dataDir, '--output', 'json'])).stdout);
    const agents = new Map<string, CliProcess>();
    for (const name of AGENTS) {
      const agent = await enrolledAgentProcess(['--data-dir', dataDir], grpcPort, name, join(temp.path, name));
      processes.push(agent);
      agents.set(name, agent);
    }
    for (const agent of agents.values()) await agent.waitForOutput(/connected to the broker/, 60_000);
    const onlineNames = async () => {
      const store = await BrokerStore.open(dataDir, { create: false });
      try {
        return (await store.agents.list())
          .filter((row) => row.state === 'online')
          .map((row) => row.name)
          .sort();
      } finally {
        await store.close();
      }
    };
    const restart = () => {
      const again = new CliProcess(brokerArgs(grpcPort, mcpPort));
      processes.push(again);
      return again;
    };
    return { broker, mcpUrl, identity, agents, onlineNames, restart };
  }

  /** A call the broker has acknowledged and that waits on a stopped agent. */
  async function callInFlight(mcpUrl: string, token: string) {
    const client = new Client({ name: 'restart-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    let acknowledged = false;
    const settled = client
      .callTool({ name: 'set_agent_labels', arguments: { host: 'north', labels: { note: 'mid-call' }, timeout_ms: 30_000 } }, undefined, {
        onprogress: () => {
          acknowledged = true;
        },
      })
      .then(
        (result) => ({ answered: true, isError: result.isError === true }),
        (error: Error) => ({ answered: false, error: error.message }),
      );
    await waitFor(() => acknowledged, { what: 'the broker acknowledging the call' });
    return { client, settled };
  }

  it('on SIGTERM, ends the call in flight, tells every agent when to come back, and has them all back after a restart', async () => {
    const { broker, mcpUrl, identity, agents, onlineNames, restart } = await startFleet();
    agents.get('north')?.signal('SIGSTOP');
    const { client, settled } = await callInFlight(mcpUrl, identity.token);

    broker.signal('SIGTERM');
    expect(await broker.exited).toBe(0);
    // The client is not left waiting: its call ends with an error or an error result.
    await client.close().catch(() => {});
    expect(await settled).not.toMatchObject({ answered: true, isError: false });
    for (const name of ['south', 'east']) await agents.get(name)?.waitForOutput(/asked this agent to reconnect later/);

    restart();
    agents.get('north')?.signal('SIGCONT');
    await waitFor(async () => (await onlineNames()).join() === [...AGENTS].sort().join(), { what: 'every agent back', timeoutMs: 60_000 });
  }, 180_000);

  it('on SIGKILL, leaves the call in flight audited as interrupted and has every agent back after a restart', async () => {
    const { broker, mcpUrl, identity, agents, onlineNames, restart } = await startFleet();
    agents.get('north')?.signal('SIGSTOP');
    const { client, settled } = await callInFlight(mcpUrl, identity.token);

    broker.signal('SIGKILL');
    await broker.exited;
    await client.close().catch(() => {});
    expect(await settled).not.toMatchObject({ answered: true, isError: false });

    const again = restart();
    await again.waitForOutput(/broker listening for agents/, 60_000);
    agents.get('north')?.signal('SIGCONT');
    await waitFor(async () => (await onlineNames()).join() === [...AGENTS].sort().join(), { what: 'every agent back', timeoutMs: 60_000 });
    const audit = JSON.parse((await runFleetmesh(['audit', '--data-dir', join(temps[0]?.path ?? '', 'broker'), '--output', 'json'])).stdout);
    expect(audit.find((row: { tool: string }) => row.tool === 'set_agent_labels')).toMatchObject({ outcome: 'interrupted' });
  }, 180_000);
});
