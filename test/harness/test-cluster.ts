import { join } from 'node:path';
import { inject } from 'vitest';
import { Agent } from '../../agent/agent.ts';
import { writeBootstrapFiles } from '../../broker/bootstrap/bootstrap-files.ts';
import { readBrokerBootstrap } from '../../broker/bootstrap/broker-bootstrap.ts';
import { Broker } from '../../broker/broker.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { CliProcess } from './cli-process.ts';
import { freePort } from './free-port.ts';
import { NatsServer } from './nats-server.ts';
import { freshDatabase } from './postgres-server.ts';
import { makeTempDir } from './temp-dir.ts';
import { brokerOptions, TEST_AGENT_DEFAULTS } from './test-fleet.ts';
import { waitFor } from './wait.ts';

export type BrokerName = 'a' | 'b' | 'c';

/**
 * Three brokers serving one fleet over a private NATS: `a` and `c` in this
 * process (so a test can look into their registries), `b` a `fleetmesh broker`
 * process a test may SIGKILL. They share one CA (bootstrap files) and one
 * store (a fresh database on the run's private PostgreSQL). `a` and `c` look at
 * the store only when asked, so what they learn from each other comes over the bus.
 */
export interface TestCluster {
  nats: NatsServer;
  a: Broker;
  c: Broker;
  b: CliProcess;
  address: Record<BrokerName, string>;
  /** An in-process agent that dials the brokers in turn starting with `first`; resolves once `a` sees it online. */
  addAgent(name: string, first: BrokerName): Promise<Agent>;
  /** Shuts broker `c` down the orderly way (its agents move to the others). */
  stopC(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestCluster(): Promise<TestCluster> {
  const temp = makeTempDir('fleetmesh-cluster-');
  const database = await freshDatabase(inject('postgresUrl'));
  const nats = await NatsServer.start();
  const files = join(temp.path, 'bootstrap');
  await writeBootstrapFiles(files);
  const caCertFile = join(files, 'ca.crt');
  const caKeyFile = join(files, 'ca.key');
  const bootstrap = readBrokerBootstrap({ caCertFile, caKeyFile, joinTokenFile: undefined, adminTokenFile: undefined });
  const dir = (name: BrokerName) => join(temp.path, name);
  const inProcess = (name: BrokerName) =>
    Broker.start(
      brokerOptions(dir(name), {
        bootstrap,
        store: database.url,
        storePollMs: 60_000,
        cluster: { url: nats.url, token: undefined, brokerId: name, beatIntervalMs: 1000 },
      }),
      silentLogger,
    );
  const a = await inProcess('a');
  const c = await inProcess('c');
  const bPort = await freePort();
  const b = new CliProcess([
    'broker',
    '--data-dir',
    dir('b'),
    '--store',
    database.url,
    '--grpc-listen',
    `127.0.0.1:${bPort}`,
    '--mcp-listen',
    '127.0.0.1:0',
    '--advertise-names',
    'localhost',
    '--ca-cert-file',
    caCertFile,
    '--ca-key-file',
    caKeyFile,
    '--bus',
    nats.url,
    '--broker-id',
    'b',
    '--heartbeat-interval',
    '200ms',
    '--operations-level',
    '3',
  ]);
  await b.waitForOutput(/broker joined the cluster/);
  const address: Record<BrokerName, string> = { a: `localhost:${a.grpcPort}`, b: `localhost:${bPort}`, c: `localhost:${c.grpcPort}` };
  const agents: Agent[] = [];
  let cStopped: Promise<void> | undefined;
  const order: BrokerName[] = ['a', 'b', 'c'];
  return {
    nats,
    a,
    c,
    b,
    address,
    async addAgent(name, first) {
      const start = order.indexOf(first);
      const dial = [...order.slice(start), ...order.slice(0, start)].map((broker) => address[broker]).join(',');
      const agent = await Agent.start(
        {
          dataDir: join(temp.path, 'agents', name),
          brokerAddress: dial,
          token: (await createJoinToken(a.store, { ttlMs: 60_000, uses: 1, labels: {} })).token,
          caPin: a.authority.pin,
          name,
          ...TEST_AGENT_DEFAULTS,
        },
        silentLogger,
        [],
      );
      agents.push(agent);
      await waitFor(() => a.registry.find(name)?.state === 'online' && c.registry.find(name)?.state === 'online', { what: `${name} online on a and c` });
      return agent;
    },
    stopC() {
      cStopped ??= c.stop();
      return cStopped;
    },
    async stop() {
      await Promise.all(agents.map((agent) => agent.stop()));
      await b.stop();
      await a.stop();
      cStopped ??= c.stop();
      await cStopped;
      await nats.stop();
      await database.drop();
      temp.remove();
    },
  };
}
