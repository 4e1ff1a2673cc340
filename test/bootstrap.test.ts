import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.ts';
import { AGENT_COMMAND, resolveAgentOptions } from '../agent/agent-options.ts';
import { BOOTSTRAP_FILES } from '../broker/bootstrap/bootstrap-files.ts';
import { type BootstrapPaths, type BrokerBootstrap, readBrokerBootstrap } from '../broker/bootstrap/broker-bootstrap.ts';
import { Broker } from '../broker/broker.ts';
import { STORE_FILE } from '../broker/store/broker-store.ts';
import { parseCommandLine } from '../shared/options/command-line.ts';
import { certificatePin } from '../shared/pki/certificates.ts';
import { captureLogger } from './harness/capture-logger.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { call, mcpClient } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { brokerOptions } from './harness/test-fleet.ts';
import { nextEvent } from './harness/wait.ts';

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8').trim();
const mode = (dir: string, file: string) => statSync(join(dir, file)).mode & 0o777;

function paths(dir: string): BootstrapPaths {
  return {
    caCertFile: join(dir, BOOTSTRAP_FILES.caCert),
    caKeyFile: join(dir, BOOTSTRAP_FILES.caKey),
    joinTokenFile: join(dir, BOOTSTRAP_FILES.joinToken),
    adminTokenFile: join(dir, BOOTSTRAP_FILES.adminToken),
  };
}

describe('fleetmesh bootstrap', () => {
  let temp: ReturnType<typeof makeTempDir>;
  const brokers: Broker[] = [];
  const agents: Agent[] = [];
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    for (const broker of brokers.splice(0)) await broker.stop();
    temp.remove();
  });

  /** Runs the command as a user would, into DIR. */
  async function bootstrap(dir: string): Promise<string> {
    const { code, stdout, stderr } = await runFleetmesh(['bootstrap', '--out', dir]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    return stdout;
  }

  async function startBroker(dataDir: string, material: BrokerBootstrap, log = captureLogger().log): Promise<Broker> {
    const broker = await Broker.start(brokerOptions(dataDir, { bootstrap: material }), log);
    brokers.push(broker);
    return broker;
  }

  /** An agent configured the way a container is: token and pin as files. */
  async function startAgent(name: string, secrets: string, broker: Broker): Promise<Agent> {
    const parsed = parseCommandLine(
      AGENT_COMMAND,
      [
        '--broker',
        `localhost:${broker.grpcPort}`,
        '--token-file',
        join(secrets, BOOTSTRAP_FILES.joinToken),
        '--ca-pin-file',
        join(secrets, BOOTSTRAP_FILES.caPin),
        '--name',
        name,
        '--data-dir',
        join(temp.path, 'agents', name),
      ],
      {},
    );
    const agent = await Agent.start({ ...resolveAgentOptions(parsed.values), backoffBaseMs: 100, backoffCapMs: 1000 }, captureLogger().log, []);
    agents.push(agent);
    if (!agent.connection.connected) await nextEvent(agent.connection, 'connected');
    return agent;
  }

  it('writes the CA, a reusable join token, its pin and an admin token as files, secrets mode 0600, and prints no secret', async () => {
    const dir = join(temp.path, 'secrets');
    const stdout = await bootstrap(dir);
    expect(mode(dir, BOOTSTRAP_FILES.caKey)).toBe(0o600);
    expect(mode(dir, BOOTSTRAP_FILES.joinToken)).toBe(0o600);
    expect(mode(dir, BOOTSTRAP_FILES.adminToken)).toBe(0o600);
    expect(mode(dir, BOOTSTRAP_FILES.caCert)).toBe(0o644);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(read(dir, BOOTSTRAP_FILES.caPin)).toBe(certificatePin(read(dir, BOOTSTRAP_FILES.caCert)));
    expect(read(dir, BOOTSTRAP_FILES.joinToken)).toMatch(/^fm1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    expect(read(dir, BOOTSTRAP_FILES.adminToken)).toMatch(/^fmc1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    expect(read(dir, BOOTSTRAP_FILES.caKey)).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(stdout).toMatch(/docker stack deploy -c docker-compose\.yml fleetmesh/);
    expect(stdout).toContain(read(dir, BOOTSTRAP_FILES.caPin));
    for (const secret of [BOOTSTRAP_FILES.joinToken, BOOTSTRAP_FILES.adminToken]) expect(stdout).not.toContain(read(dir, secret).split('.')[2]);

    const helm = await runFleetmesh(['bootstrap', '--out', join(temp.path, 'helm'), '--format', 'helm-values']);
    expect(helm.stdout).toMatch(/^bootstrap:\n {2}existingSecret: fleetmesh-bootstrap$/m);
    const env = await runFleetmesh(['bootstrap', '--out', join(temp.path, 'env'), '--format', 'env']);
    expect(env.stdout).toContain(`FLEETMESH_TOKEN_FILE=${join(temp.path, 'env', BOOTSTRAP_FILES.joinToken)}`);

    const again = await runFleetmesh(['bootstrap', '--out', dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds ca\.crt, ca\.key, join-token, ca-pin, admin-token/);
  });

  it('gives a broker its CA, a join token every agent can use, and an admin identity, stored hashed and never logged', async () => {
    const secrets = join(temp.path, 'secrets');
    await bootstrap(secrets);
    const { log, lines } = captureLogger();
    const broker = await startBroker(join(temp.path, 'broker'), readBrokerBootstrap(paths(secrets)), log);
    expect(broker.authority.pin).toBe(read(secrets, BOOTSTRAP_FILES.caPin));
    // Like a DaemonSet: every agent reads the same secret.
    await startAgent('node-a', secrets, broker);
    await startAgent('node-b', secrets, broker);

    const admin = await broker.store.identities.findLiveByName('admin');
    expect(admin).toMatchObject({ level: 3, grants: ['*:*=write'] });
    const client = await mcpClient(broker, read(secrets, BOOTSTRAP_FILES.adminToken));
    const listed = await call(client, 'list_agents');
    expect(listed.structuredContent).toMatchObject({
      count: 2,
      agents: [
        { name: 'node-a', state: 'online' },
        { name: 'node-b', state: 'online' },
      ],
    });
    await client.close();

    const tokenSecret = read(secrets, BOOTSTRAP_FILES.joinToken).split('.')[2] as string;
    const adminSecret = read(secrets, BOOTSTRAP_FILES.adminToken).split('.')[2] as string;
    const stored = readFileSync(join(temp.path, 'broker', STORE_FILE));
    for (const secret of [tokenSecret, adminSecret]) {
      expect(stored.includes(secret)).toBe(false);
      expect(JSON.stringify(lines)).not.toContain(secret);
    }
    expect(JSON.stringify(lines)).not.toContain('PRIVATE KEY');
    // Admin commands read the pin from the data dir; the key stays in the secret only.
    expect(certificatePin(read(join(temp.path, 'broker'), 'ca.crt'))).toBe(broker.authority.pin);
    expect(existsSync(join(temp.path, 'broker', 'ca.key'))).toBe(false);
  });

  it('keeps the tokens across restarts, leaves a revoked one revoked, and refuses a data dir of another CA', async () => {
    const secrets = join(temp.path, 'secrets');
    await bootstrap(secrets);
    const material = readBrokerBootstrap(paths(secrets));
    const dataDir = join(temp.path, 'broker');
    let broker = await startBroker(dataDir, material);
    await startAgent('first', secrets, broker);
    const tokenId = read(secrets, BOOTSTRAP_FILES.joinToken).split('.')[1] as string;
    await broker.store.tokens.revoke(tokenId, Date.now());
    await Promise.all(agents.splice(0).map((agent) => agent.stop()));
    await (brokers.pop() as Broker).stop();

    broker = await startBroker(dataDir, material);
    expect((await broker.store.tokens.get(tokenId))?.revokedAt).not.toBeNull();
    const client = await mcpClient(broker, read(secrets, BOOTSTRAP_FILES.adminToken));
    expect((await call(client, 'list_agents')).structuredContent).toMatchObject({ count: 1 });
    await client.close();
    await expect(startAgent('second', secrets, broker)).rejects.toThrow(/join token \w+ was revoked/);
    await (brokers.pop() as Broker).stop();

    const other = join(temp.path, 'other');
    await bootstrap(other);
    await expect(startBroker(dataDir, readBrokerBootstrap(paths(other)))).rejects.toThrow(/belongs to another CA/);
  });

  it('refuses bad bootstrap files before anything starts, naming the flag', async () => {
    const secrets = join(temp.path, 'secrets');
    await bootstrap(secrets);
    const given = paths(secrets);
    expect(() => readBrokerBootstrap({ ...given, caKeyFile: undefined })).toThrow(/--ca-cert-file and --ca-key-file go together/);
    expect(() => readBrokerBootstrap({ ...given, joinTokenFile: given.adminTokenFile })).toThrow(/--join-token-file .* does not hold a join token/);
    expect(() => readBrokerBootstrap({ ...given, adminTokenFile: join(secrets, 'nope') })).toThrow(/--admin-token-file .*nope does not exist/);
    const other = join(temp.path, 'other');
    await bootstrap(other);
    expect(() => readBrokerBootstrap({ ...given, caKeyFile: join(other, BOOTSTRAP_FILES.caKey) })).toThrow(/is not the key of --ca-cert-file/);
    writeFileSync(join(temp.path, 'empty'), '\n');
    expect(() => readBrokerBootstrap({ ...given, joinTokenFile: join(temp.path, 'empty') })).toThrow(/--join-token-file .*empty is empty/);

    const cli = await runFleetmesh(['broker', '--data-dir', join(temp.path, 'b'), '--ca-cert-file', given.caCertFile as string]);
    expect(cli.code).toBe(2);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).toMatch(/^fleetmesh broker: --ca-cert-file and --ca-key-file go together/);
    const agent = await runFleetmesh(['agent', '--token', 'x', '--token-file', given.joinTokenFile as string, '--data-dir', join(temp.path, 'a')]);
    expect(agent.code).toBe(2);
    expect(agent.stderr).toMatch(/--token and --token-file cannot be combined/);
  });
});
