import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { BOOTSTRAP_FILES, writeBootstrapFiles } from '../broker/bootstrap/bootstrap-files.ts';
import { readBrokerBootstrap } from '../broker/bootstrap/broker-bootstrap.ts';
import { SERVER_CERT_FILE } from '../broker/pki/broker-authority.ts';
import { STORE_FILE } from '../broker/store/broker-store.ts';
import { CaSignerTable } from '../broker/store/ca-signer-table.ts';
import { MIGRATIONS } from '../broker/store/migrations.ts';
import { PostgresEngine } from '../broker/store/postgres-engine.ts';
import { brokerAddresses, brokerProcessArgs, enrolledAgentProcess } from './harness/broker-process.ts';
import { CliProcess, runFleetmesh } from './harness/cli-process.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { freshDatabase, type PostgresServer, startPostgres } from './harness/postgres-server.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, TEST_CA_KEY_SECRET, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

describe('a broker on PostgreSQL', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('enrolls an agent and serves an MCP call with --store postgres://, its audit rows in PostgreSQL', async () => {
    const database = await freshDatabase(inject('postgresUrl'));
    cleanups.push(() => database.drop());
    const temp = makeTempDir();
    cleanups.push(() => temp.remove());
    const dataDir = join(temp.path, 'broker');
    const store = ['--data-dir', dataDir, '--store', database.url];
    // A store shared by brokers keeps the CA key only sealed, with the secret the brokers are given.
    const broker = new CliProcess(brokerProcessArgs(dataDir, { level: 3, extra: ['--store', database.url, '--ca-key-secret', TEST_CA_KEY_SECRET] }));
    cleanups.push(() => broker.stop());
    const { mcpUrl, grpcPort } = await brokerAddresses(broker);
    const identity = JSON.parse((await runFleetmesh(['identity', 'create', 'pg-admin', '--level', '3', ...store, '--output', 'json'])).stdout);
    const agent = await enrolledAgentProcess(store, grpcPort, 'pg-host', join(temp.path, 'agent'));
    cleanups.push(() => agent.stop());
    await agent.waitForOutput(/connected to the broker/);

    const listed = await runFleetmesh(['agents', ...store, '--output', 'json']);
    expect(JSON.parse(listed.stdout).agents).toMatchObject([{ name: 'pg-host' }]);
    const client = await mcpClient({ mcpUrl } as Parameters<typeof mcpClient>[0], identity.token);
    cleanups.push(() => client.close());
    const labelled = await call(client, 'set_agent_labels', { host: 'pg-host', labels: { tier: 'pg' } });
    expect(labelled.isError).toBeFalsy();

    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    cleanups.push(() => reader.end());
    const audit = await reader.query("SELECT identity, tool, outcome FROM audit WHERE tool = 'set_agent_labels'");
    expect(audit.rows).toEqual([{ identity: 'pg-admin', tool: 'set_agent_labels', outcome: 'ok' }]);
    const agents = await reader.query('SELECT name, state FROM agents');
    expect(agents.rows).toEqual([{ name: 'pg-host', state: 'online' }]);
    // Nothing went to a SQLite file beside the CA.
    expect(existsSync(join(dataDir, STORE_FILE))).toBe(false);
  });

  it('shares one CA among the brokers of a store, each with its own server certificate: an agent enrolled on one connects to another', async () => {
    const database = await freshDatabase(inject('postgresUrl'));
    cleanups.push(() => database.drop());
    const first = await startTestFleet({ store: database.url, caKeySecret: TEST_CA_KEY_SECRET });
    cleanups.push(() => first.stop());
    const second = await startTestFleet({ store: database.url, caKeySecret: TEST_CA_KEY_SECRET });
    cleanups.push(() => second.stop());
    expect(second.pin).toBe(first.pin);
    const serverCertificate = (fleet: TestFleet) => readFileSync(join(fleet.broker.options.dataDir, SERVER_CERT_FILE), 'utf8');
    expect(serverCertificate(second)).not.toBe(serverCertificate(first));

    const roamer = await first.addAgent('roamer');
    await first.stopAgent(roamer);
    const moved = new CliProcess(['agent', '--broker', second.address, '--data-dir', first.agentDir('roamer')]);
    cleanups.push(() => moved.stop());
    await moved.waitForOutput(/connected to the broker/);
    await waitFor(() => second.broker.registry.find('roamer')?.state === 'online', { what: 'roamer online on the second broker' });
  });

  it('starts brokers of a cluster together from the same bootstrap files: one CA, one join token, one admin, a foreign CA refused', async () => {
    const database = await freshDatabase(inject('postgresUrl'));
    cleanups.push(() => database.drop());
    const temp = makeTempDir();
    cleanups.push(() => temp.remove());
    const files = (dir: string) => ({
      caCertFile: join(dir, BOOTSTRAP_FILES.caCert),
      caKeyFile: join(dir, BOOTSTRAP_FILES.caKey),
      joinTokenFile: join(dir, BOOTSTRAP_FILES.joinToken),
      adminTokenFile: join(dir, BOOTSTRAP_FILES.adminToken),
    });
    const written = await writeBootstrapFiles(join(temp.path, 'secrets'));
    const bootstrap = readBrokerBootstrap(files(written.dir));
    const fleets = await Promise.all([0, 1, 2].map(() => startTestFleet({ store: database.url, bootstrap })));
    for (const fleet of fleets) cleanups.push(() => fleet.stop());
    expect(fleets.map((fleet) => fleet.pin)).toEqual([written.pin, written.pin, written.pin]);
    const [first] = fleets as [TestFleet];
    expect((await first.broker.store.tokens.list()).map((token) => token.id)).toEqual([written.joinTokenId]);
    expect((await first.broker.store.identities.list()).map((identity) => identity.name)).toEqual(['admin']);

    const other = await writeBootstrapFiles(join(temp.path, 'other'));
    await expect(startTestFleet({ store: database.url, bootstrap: readBrokerBootstrap(files(other.dir)) })).rejects.toThrow(/use another CA/);
  });

  it('waits its turn for a connection when hundreds of statements come at once, rather than refusing them after 5 s', async () => {
    const database = await freshDatabase(inject('postgresUrl'));
    cleanups.push(() => database.drop());
    const engine = new PostgresEngine(database.url);
    cleanups.push(() => engine.close());
    // 200 statements of 0.3 s on the broker's 10 connections: the last waits about 6 s for its turn.
    const started = Date.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 200 }, () => engine.get('SELECT pg_sleep(0.3)')));
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(Date.now() - started).toBeGreaterThan(5000);
  });

  it('renews the signer lease ahead of the statements waiting for a connection, so a crowd of agents does not let it lapse', async () => {
    const database = await freshDatabase(inject('postgresUrl'));
    cleanups.push(() => database.drop());
    const engine = new PostgresEngine(database.url);
    cleanups.push(() => engine.close());
    await engine.migrate(MIGRATIONS);
    const signer = new CaSignerTable(engine);
    expect(await signer.hold('broker-a', Date.now(), Date.now() + 8000)).toBe(true);
    // 200 statements of 0.3 s on the broker's 10 connections: about 6 s of waiting, behind which an 8 s lease renewed every 2 s would lapse.
    const crowd = Promise.allSettled(Array.from({ length: 200 }, () => engine.get('SELECT pg_sleep(0.3)')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    expect(await signer.hold('broker-a', Date.now(), Date.now() + 8000)).toBe(true);
    const renewedInMs = Date.now() - started;
    const outcomes = await crowd;
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    // Its turn is the next connection given back (a statement of 0.3 s), not the crowd's last.
    expect(renewedInMs).toBeLessThan(1500);
    expect(Date.now() - started).toBeGreaterThan(4000);
  });

  it('answers reads while PostgreSQL is down, refuses changes as unavailable, and recovers when it is back', async () => {
    const server: PostgresServer = await startPostgres();
    cleanups.push(() => server.stop());
    const database = await server.createDatabase();
    const fleet: TestFleet = await startTestFleet({ store: database.url, caKeySecret: TEST_CA_KEY_SECRET });
    cleanups.push(() => fleet.stop());
    await fleet.addAgent('web-1');
    const client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
    cleanups.push(() => client.close());
    const readyz = `${new URL(fleet.broker.mcpUrl).origin}/readyz`;

    server.halt();
    const info = await call(client, 'agent_info', { host: 'web-1' });
    expect(info.structuredContent).toMatchObject({ host: 'web-1', availability: 'available' });
    const listed = await call(client, 'list_agents');
    expect(JSON.stringify(listed.structuredContent)).toContain('web-1');
    const refused = await call(client, 'set_agent_labels', { host: 'web-1', labels: { tier: 'down' } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error).toMatchObject({ code: 'unavailable' });
    expect((await fetch(readyz)).status).toBe(503);

    server.resume();
    await waitFor(async () => (await fetch(readyz)).status === 200, { what: 'the broker ready again' });
    const changed = await call(client, 'set_agent_labels', { host: 'web-1', labels: { tier: 'back' } });
    expect(changed.isError).toBeFalsy();
    expect((await fleet.broker.store.audit.recent({ limit: 5 })).map((row) => [row.tool, row.outcome])).toContainEqual(['set_agent_labels', 'ok']);
  });
});
