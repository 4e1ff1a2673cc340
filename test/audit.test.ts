import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerStore } from '../broker/store/broker-store.ts';
import { CliProcess, runFleetmesh } from './harness/cli-process.ts';
import { call, identityToken, mcpClient, readJson } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

describe('the audit log', () => {
  let fleet: TestFleet | undefined;
  const processes: CliProcess[] = [];
  const temps: ReturnType<typeof makeTempDir>[] = [];
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await fleet?.stop();
    fleet = undefined;
    for (const temp of temps.splice(0)) temp.remove();
  });

  it('records every call of level 1 or more, with secrets redacted, and not reads of level 0', async () => {
    fleet = await startTestFleet();
    await fleet.addAgent('web-1');
    const client = await mcpClient(fleet.broker, identityToken(fleet.broker, 3, undefined, 'auditor'));
    await call(client, 'agent_info', { host: 'web-1' });
    await call(client, 'set_agent_labels', { host: 'web-1', labels: { owner: 'ops', api_token: 's3cret' } });
    await call(client, 'revoke_agent', { host: 'web-1' });
    const rows = fleet.broker.store.audit.recent({ limit: 10 });
    expect(rows.map((r) => [r.tool, r.outcome, r.errorCode])).toEqual([
      ['revoke_agent', 'refused', 'confirm_required'],
      ['set_agent_labels', 'ok', null],
    ]);
    const labels = rows[1];
    expect(labels).toMatchObject({ identity: 'auditor', action: 'agent.set_labels', level: 2, targets: ['web-1'] });
    expect(labels?.arguments).toEqual({ host: 'web-1', labels: { owner: 'ops', api_token: '[redacted]' } });
    expect(labels?.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(rows)).not.toContain('s3cret');

    const resource = await readJson(client, 'fleet://audit');
    expect(resource.entries[1]).toMatchObject({ tool: 'set_agent_labels', outcome: 'ok', identity: 'auditor' });
    const cli = await runFleetmesh(['audit', '--data-dir', fleet.broker.options.dataDir]);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/auditor\s+set_agent_labels\s+web-1\s+ok/);
    await client.close();
  });

  it('keeps the row of a call the broker acknowledged right before it was killed', async () => {
    const temp = makeTempDir();
    temps.push(temp);
    const dataDir = join(temp.path, 'broker');
    const brokerArgs = [
      'broker',
      '--data-dir',
      dataDir,
      '--grpc-listen',
      '127.0.0.1:0',
      '--mcp-listen',
      '127.0.0.1:0',
      '--advertise-names',
      'localhost',
      '--operations-level',
      '3',
    ];
    const broker = new CliProcess(brokerArgs);
    processes.push(broker);
    const mcpUrl = (await broker.waitForOutput(/mcp=(http:\/\/\S+\/mcp)/))[1] as string;
    const grpcPort = (await broker.waitForOutput(/grpc=127\.0\.0\.1:(\d+)/))[1] as string;
    const identity = JSON.parse((await runFleetmesh(['identity', 'create', 'killer', '--level', '3', '--data-dir', dataDir, '--output', 'json'])).stdout);
    const enrollment = JSON.parse((await runFleetmesh(['token', 'create', '--data-dir', dataDir, '--output', 'json'])).stdout);
    const agentDir = join(temp.path, 'agent');
    const agent = new CliProcess([
      'agent',
      '--broker',
      `localhost:${grpcPort}`,
      '--token',
      enrollment.token,
      '--ca-pin',
      enrollment.ca_pin,
      '--name',
      'stuck',
      '--data-dir',
      agentDir,
    ]);
    processes.push(agent);
    await agent.waitForOutput(/connected to the broker/);
    agent.signal('SIGSTOP');

    const client = new Client({ name: 'audit-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${identity.token}` } } }));
    let acknowledged = false;
    const pending = client
      .callTool({ name: 'set_agent_labels', arguments: { host: 'stuck', labels: { note: 'killed' }, timeout_ms: 30_000 } }, undefined, {
        onprogress: () => {
          acknowledged = true;
        },
      })
      .catch(() => undefined);
    await waitFor(() => acknowledged, { what: 'the broker acknowledging the call' });
    broker.signal('SIGKILL');
    await broker.exited;
    // Closing the client fails the call it still waits for.
    await client.close().catch(() => {});
    await pending;

    const store = BrokerStore.open(dataDir, { create: false });
    const [row] = store.audit.recent({ limit: 5 });
    store.close();
    expect(row).toMatchObject({ tool: 'set_agent_labels', identity: 'killer', targets: ['stuck'], outcome: 'pending' });

    // On restart the broker marks it interrupted; the audit command shows it.
    const again = new CliProcess(brokerArgs);
    processes.push(again);
    await again.waitForOutput(/broker listening for agents/);
    const listed = await runFleetmesh(['audit', '--data-dir', dataDir, '--output', 'json']);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ tool: 'set_agent_labels', outcome: 'interrupted', callId: row?.callId });
  });
});
