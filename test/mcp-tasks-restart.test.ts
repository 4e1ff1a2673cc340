import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.ts';
import { createIdentity } from '../broker/auth/identities.ts';
import { createJoinToken } from '../broker/enrollment/join-tokens.ts';
import { BrokerStore } from '../broker/store/broker-store.ts';
import { silentLogger } from '../shared/log/logger.ts';
import { brokerAddresses, brokerProcessArgs } from './harness/broker-process.ts';
import { CliProcess } from './harness/cli-process.ts';
import { identityToken, mcpClient } from './harness/mcp-client.ts';
import { openRawStream, type RawStream } from './harness/raw-stream.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { TEST_AGENT_DEFAULTS } from './harness/test-agent-defaults.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { nextEvent, waitFor } from './harness/wait.ts';

async function connect(mcpUrl: string, token: string): Promise<Client> {
  const client = new Client({ name: 'tasks-restart-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

async function startTask(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 600_000 } } }, CreateTaskResultSchema);
  return created.task.taskId;
}

const getTask = (client: Client, taskId: string) => client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema);
const taskResult = (client: Client, taskId: string) => client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema);

describe('MCP tasks whose broker stopped', () => {
  const processes: CliProcess[] = [];
  const temps: ReturnType<typeof makeTempDir>[] = [];
  let fleet: TestFleet | undefined;
  let silent: RawStream | undefined;
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    silent?.close();
    silent = undefined;
    await fleet?.stop();
    fleet = undefined;
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    for (const temp of temps.splice(0)) temp.remove();
  });

  it('ends as failed, with what the audit knows of each host, a task whose broker was killed', async () => {
    const temp = makeTempDir();
    temps.push(temp);
    const dataDir = join(temp.path, 'broker');
    const brokerArgs = brokerProcessArgs(dataDir, { level: 2 });
    const broker = new CliProcess(brokerArgs);
    processes.push(broker);
    const { mcpUrl, grpcPort } = await brokerAddresses(broker);
    const caPin = (await broker.waitForOutput(/ca_pin=(sha256:[0-9a-f]+)/))[1] as string;
    // The admin commands' way: the running broker's store, opened beside it.
    const store = await BrokerStore.open(dataDir, { create: false });
    const identity = await createIdentity(store, { name: 'tasker', level: 2 });
    const joinTokens = await Promise.all([1, 2].map(() => createJoinToken(store, { ttlMs: 60_000, uses: 1, labels: {} })));
    await store.close();
    const agentOptions = (name: string, token: string) => ({
      ...TEST_AGENT_DEFAULTS,
      dataDir: join(temp.path, name),
      brokerAddress: `localhost:${grpcPort}`,
      token,
      caPin,
      name,
    });
    const [quick, donor] = await Promise.all(
      ['quick', 'stuck'].map(async (name, i) => {
        const agent = await Agent.start(agentOptions(name, joinTokens[i]?.token ?? ''), silentLogger, []);
        agents.push(agent);
        if (!agent.connection.connected) await nextEvent(agent.connection, 'connected');
        return agent;
      }),
    );
    // A host that takes the call and never answers: the task stays at one of two until its broker dies.
    await donor?.stop();
    silent = openRawStream(`localhost:${grpcPort}`, (donor as Agent).connection.currentIdentity, { actions: ['agent.set_labels'] });
    await waitFor(() => silent?.frames.some((f) => f.frame.case === 'welcome'), { what: 'the silent host welcomed' });
    expect(quick?.connection.connected).toBe(true);

    const client = await connect(mcpUrl, identity.token);
    const taskId = await startTask(client, 'set_agent_labels', { hosts: ['quick', 'stuck'], labels: { note: 'killed' }, timeout_ms: 60_000 });
    await waitFor(async () => /^1 of 2 hosts answered/.test((await getTask(client, taskId)).statusMessage ?? ''), { what: 'one host answered' });
    broker.signal('SIGKILL');
    await broker.exited;
    await client.close().catch(() => {});

    const again = new CliProcess(brokerArgs);
    processes.push(again);
    const newUrl = (await again.waitForOutput(/mcp=(http:\/\/\S+\/mcp)/))[1] as string;
    const fresh = await connect(newUrl, identity.token);
    try {
      const task = await getTask(fresh, taskId);
      expect(task.status).toBe('failed');
      expect(task.statusMessage).toMatch(/^the broker running this task stopped before it ended; last progress: 1 of 2 hosts answered/);
      const result = await taskResult(fresh, taskId);
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        error: { code: 'unavailable' },
        audit: {
          outcome: 'interrupted',
          targets: [
            { host: 'quick', recorded: [] },
            { host: 'stuck', recorded: [] },
          ],
        },
      });
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
      expect(text).toMatch(/Whether set_agent_labels changed anything is not known/);
      expect(text).toMatch(/- "stuck": no answer recorded/);
    } finally {
      await fresh.close();
    }
  });

  it('ends as failed a task still working when its broker is restarted', async () => {
    fleet = await startTestFleet({ operationsLevel: 1 });
    const donor = await fleet.addAgent('rs-silent');
    await fleet.stopAgent(donor);
    silent = openRawStream(fleet.address, donor.connection.currentIdentity, { actions: ['agent.info'] });
    await waitFor(() => silent?.frames.some((f) => f.frame.case === 'welcome'), { what: 'the silent host welcomed' });
    const token = await identityToken(fleet.broker, 0);
    const client = await mcpClient(fleet.broker, token);
    const taskId = await startTask(client, 'agent_info', { host: 'rs-silent', timeout_ms: 60_000 });
    await client.close();

    await fleet.restartBroker();
    const fresh = await mcpClient(fleet.broker, token);
    try {
      expect(await getTask(fresh, taskId)).toMatchObject({
        status: 'failed',
        statusMessage: expect.stringMatching(/^the broker running this task stopped before it ended/),
      });
      const result = await taskResult(fresh, taskId);
      // A read has no audit row: nothing changed, and it says so.
      expect(result.structuredContent).toMatchObject({ error: { code: 'unavailable' }, audit: null });
      expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/agent_info changes nothing the audit records; call it again/) });
    } finally {
      await fresh.close();
    }
  });
});
