import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerStore } from '../broker/store/broker-store.ts';
import { brokerAddresses, brokerProcessArgs, enrolledAgentProcess } from './harness/broker-process.ts';
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
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3, undefined, 'auditor'));
    await call(client, 'agent_info', { host: 'web-1' });
    await call(client, 'set_agent_labels', { host: 'web-1', labels: { owner: 'ops', api_token: 's3cret' } });
    await call(client, 'revoke_agent', { host: 'web-1' });
    const rows = await fleet.broker.store.audit.recent({ limit: 10 });
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

  it('records the agents a call targeted by id, so a re-enrolled name is told apart from the revoked agent', async () => {
    fleet = await startTestFleet();
    const first = await fleet.addAgent('web-1');
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    await call(client, 'set_agent_labels', { host: 'web-1', labels: { generation: 'one' } });
    expect((await call(client, 'revoke_agent', { host: 'web-1', confirm: true })).isError).toBeFalsy();
    await fleet.stopAgent(first);
    const second = await fleet.addAgent('web-1', { dataDir: fleet.agentDir('web-1-again') });
    await call(client, 'set_agent_labels', { host: 'web-1', labels: { generation: 'two' } });
    await client.close();
    const labelled = (await fleet.broker.store.audit.recent({ limit: 10 })).filter((row) => row.tool === 'set_agent_labels');
    expect(labelled.map((row) => [row.targets, row.targetIds])).toEqual([
      [['web-1'], [second.connection.currentIdentity.agentId]],
      [['web-1'], [first.connection.currentIdentity.agentId]],
    ]);
  });

  it('audits refusals (a tool above the caller level, a wrong bearer token) at a bounded rate, and fleetmesh audit --refused lists them', async () => {
    // One refusal row a hundred minutes per caller after a burst of three: the test sees exactly where the limit bites.
    fleet = await startTestFleet({ refusalAuditLimit: { burst: 3, perMinute: 0.01 } });
    await fleet.addAgent('web-1');
    const reader = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0, undefined, 'reader'));
    const attempt = await call(reader, 'docker_stop', { host: 'web-1', container: 'db' });
    // Answered exactly as a tool that does not exist...
    expect(attempt.isError).toBe(true);
    expect(attempt.structuredContent.error).toMatchObject({ code: 'not_found', message: 'unknown tool: docker_stop' });
    // ...and written down.
    const wrongToken = `fmc1.0123456789abcdef.${'A'.repeat(43)}`;
    const refused = await fetch(fleet.broker.mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${wrongToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(refused.status).toBe(401);

    const listed = await runFleetmesh(['audit', '--refused', '--data-dir', fleet.broker.options.dataDir]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/reader\s+docker_stop\s+not_found\s+docker\.stop is level 1, above this identity's level 0; answered as an unknown tool/);
    expect(listed.stdout).toMatch(/source \S+\s+\/mcp\s+forbidden\s+bearer token refused: the token is not known/);
    const json = JSON.parse((await runFleetmesh(['audit', '--refused', '--output', 'json', '--data-dir', fleet.broker.options.dataDir])).stdout);
    expect(json.find((row: { tool: string }) => row.tool === '/mcp')).toMatchObject({
      identity: '',
      arguments: { token_id: '0123456789abcdef' },
      outcome: 'refused',
    });
    expect(json.find((row: { tool: string }) => row.tool === 'docker_stop')).toMatchObject({
      identity: 'reader',
      action: 'docker.stop',
      arguments: { host: 'web-1', container: 'db' },
    });

    // Ten more attempts: two more rows fill the burst, one row says the rest are counted, and nothing else is written.
    for (let i = 0; i < 10; i += 1) await call(reader, 'docker_stop', { host: 'web-1', container: 'db' });
    await reader.close();
    const rows = await fleet.broker.store.audit.recent({ limit: 100, refused: true, identity: 'reader' });
    expect(rows).toHaveLength(4);
    expect(rows[0]?.reason).toMatch(/refusals a minute of identity reader: further ones are counted, not written, for now$/);
  });

  it('keeps the row of a call the broker acknowledged right before it was killed', async () => {
    const temp = makeTempDir();
    temps.push(temp);
    const dataDir = join(temp.path, 'broker');
    const brokerArgs = brokerProcessArgs(dataDir, { level: 3 });
    const broker = new CliProcess(brokerArgs);
    processes.push(broker);
    const { mcpUrl, grpcPort } = await brokerAddresses(broker);
    const identity = JSON.parse((await runFleetmesh(['identity', 'create', 'killer', '--level', '3', '--data-dir', dataDir, '--output', 'json'])).stdout);
    const agentDir = join(temp.path, 'agent');
    const agent = await enrolledAgentProcess(['--data-dir', dataDir], grpcPort, 'stuck', agentDir);
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

    const store = await BrokerStore.open(dataDir, { create: false });
    const [row] = await store.audit.recent({ limit: 5 });
    await store.close();
    expect(row).toMatchObject({ tool: 'set_agent_labels', identity: 'killer', targets: ['stuck'], outcome: 'pending' });

    // On restart the broker marks it interrupted; the audit command shows it.
    const again = new CliProcess(brokerArgs);
    processes.push(again);
    await again.waitForOutput(/broker listening for agents/);
    const listed = await runFleetmesh(['audit', '--data-dir', dataDir, '--output', 'json']);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ tool: 'set_agent_labels', outcome: 'interrupted', callId: row?.callId });
  });
});
