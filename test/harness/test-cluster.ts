import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inject } from 'vitest';
import { Agent, type CollectorChoice } from '../../agent/agent.ts';
import type { AgentOptions } from '../../agent/agent-options.ts';
import { writeBootstrapFiles } from '../../broker/bootstrap/bootstrap-files.ts';
import { NO_BOOTSTRAP, readBrokerBootstrap } from '../../broker/bootstrap/broker-bootstrap.ts';
import { Broker } from '../../broker/broker.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import type { AgentRole } from '../../broker/store/agent-roles-table.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { CliProcess } from './cli-process.ts';
import { freePort } from './free-port.ts';
import { NatsServer } from './nats-server.ts';
import { freshDatabase } from './postgres-server.ts';
import { makeTempDir } from './temp-dir.ts';
import { TEST_AGENT_DEFAULTS } from './test-agent-defaults.ts';
import { brokerOptions, TEST_CA_KEY_SECRET } from './test-fleet.ts';
import { waitFor } from './wait.ts';

export type BrokerName = 'a' | 'b' | 'c';

const NAMES: readonly BrokerName[] = ['a', 'b', 'c'];

export interface TestClusterOptions {
  /**
   * The loopback address each broker takes agents on; with it, all three
   * listen on one port (so one name resolving to those addresses reaches
   * any of them). Default: 127.0.0.1, each on a port of its own.
   */
  grpcHosts?: Record<BrokerName, string>;
  /** The names the brokers' certificates carry and agents dial (default: localhost). */
  advertiseNames?: string[];
  /** Brokers not started with the others (startBroker starts them later). */
  later?: BrokerName[];
  /**
   * One signer: `b` starts first with the CA files and the CA key secret, so
   * the store keeps the key sealed and `b` takes the signer lease; `c` has the
   * secret only (it may take the lease over); `a` has neither and never holds
   * the key. Without it, every broker is given the CA files and may sign.
   */
  oneSigner?: boolean;
}

/**
 * Three brokers serving one fleet over a private NATS: `a` and `c` in this
 * process (so a test can look into their registries), `b` a `fleetmesh broker`
 * process a test may SIGKILL. They share one CA (bootstrap files) and one
 * store (a fresh database on the run's private PostgreSQL). `a` and `c` look at
 * the store only when asked, so what they learn from each other comes over the bus.
 * Each keeps its ports, data dir and broker id across restarts.
 */
export interface TestCluster {
  nats: NatsServer;
  /** The token the bus asks of every client. */
  busToken: string;
  /** The PostgreSQL database the brokers share (`--store`). */
  storeUrl: string;
  /** The fleet CA's files, which every broker is given. */
  caFiles: { cert: string; key: string };
  /** The broker running now under that name (a stopped one stays until it is started again). */
  readonly a: Broker;
  readonly c: Broker;
  readonly b: CliProcess;
  /** Where agents reach each broker, as `--broker` takes it. */
  address: Record<BrokerName, string>;
  /** Each broker's MCP endpoint. */
  mcpUrl: Record<BrokerName, string>;
  /**
   * An in-process agent that dials the brokers in turn starting with `first`
   * (or `dial`, as `--broker` takes it); resolves once the running in-process
   * brokers see it online.
   */
  addAgent(
    name: string,
    first: BrokerName,
    options?: { dial?: string; roles?: AgentRole[]; agent?: Partial<AgentOptions>; collectors?: CollectorChoice },
  ): Promise<Agent>;
  running(name: BrokerName): boolean;
  /** Shuts a broker down the orderly way (its agents move to the others); `b` is killed if it has not exited after `killAfterMs` (default 5 s). */
  stopBroker(name: BrokerName, killAfterMs?: number): Promise<void>;
  /** Starts a stopped (or killed) broker again; resolves once it joined the cluster. */
  startBroker(name: BrokerName): Promise<void>;
  /** Shuts broker `c` down the orderly way (its agents move to the others). */
  stopC(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const temp = makeTempDir('fleetmesh-cluster-');
  const database = await freshDatabase(inject('postgresUrl'));
  // The bus asks for a token, as every deployment's does: a broker refuses a bus that lets strangers in.
  const busToken = randomBytes(16).toString('hex');
  const nats = await NatsServer.start(['--auth', busToken]);
  const files = join(temp.path, 'bootstrap');
  await writeBootstrapFiles(files);
  const caCertFile = join(files, 'ca.crt');
  const caKeyFile = join(files, 'ca.key');
  const bootstrap = readBrokerBootstrap({ caCertFile, caKeyFile, joinTokenFile: undefined, adminTokenFile: undefined });
  const advertiseNames = options.advertiseNames ?? ['localhost'];
  const dir = (name: BrokerName) => join(temp.path, name);
  const sharedPort = options.grpcHosts ? await freePort() : undefined;
  const grpcListen = {} as Record<BrokerName, string>;
  const mcpPort = {} as Record<BrokerName, number>;
  for (const name of NAMES) {
    grpcListen[name] = `${options.grpcHosts?.[name] ?? '127.0.0.1'}:${sharedPort ?? (await freePort())}`;
    mcpPort[name] = await freePort();
  }
  const dialName = advertiseNames[0] ?? 'localhost';
  const address = Object.fromEntries(
    NAMES.map((name) => [name, options.grpcHosts ? `${dialName}:${sharedPort}` : `${dialName}:${grpcListen[name].split(':')[1]}`]),
  ) as Record<BrokerName, string>;
  const mcpUrl = Object.fromEntries(NAMES.map((name) => [name, `http://127.0.0.1:${mcpPort[name]}/mcp`])) as Record<BrokerName, string>;

  const inProcess = (name: 'a' | 'c') =>
    Broker.start(
      brokerOptions(dir(name), {
        bootstrap: options.oneSigner ? NO_BOOTSTRAP : bootstrap,
        ...(options.oneSigner && name === 'c' ? { caKeySecret: TEST_CA_KEY_SECRET } : {}),
        store: database.url,
        storePollMs: 60_000,
        grpcListen: grpcListen[name],
        mcpListen: `127.0.0.1:${mcpPort[name]}`,
        advertiseNames,
        cluster: {
          url: nats.url,
          token: busToken,
          brokerId: name,
          beatIntervalMs: 1000,
          // Under one shared name, no broker can be told apart: none is sent agents to even out the load.
          ...(options.grpcHosts ? {} : { agentAddress: address[name] }),
        },
      }),
      silentLogger,
    );
  const processArgs = () => [
    'broker',
    '--data-dir',
    dir('b'),
    '--store',
    database.url,
    '--grpc-listen',
    grpcListen.b,
    '--mcp-listen',
    `127.0.0.1:${mcpPort.b}`,
    '--advertise-names',
    advertiseNames.join(','),
    '--ca-cert-file',
    caCertFile,
    '--ca-key-file',
    caKeyFile,
    ...(options.oneSigner ? ['--ca-key-secret', TEST_CA_KEY_SECRET] : []),
    '--bus',
    nats.url.replace('nats://', `nats://${busToken}@`),
    '--broker-id',
    'b',
    '--heartbeat-interval',
    '200ms',
    '--operations-level',
    '3',
    ...(options.grpcHosts ? [] : ['--cluster-address', address.b]),
  ];

  const inProcessBrokers = new Map<'a' | 'c', Broker>();
  /** Brokers stopped and not started again: their last instance stays readable. */
  const stopped = new Set<BrokerName>(options.later ?? []);
  const stopping = new Map<BrokerName, Promise<void>>();
  let b: CliProcess | undefined;
  const first = (name: BrokerName): Broker | CliProcess => {
    const found = name === 'b' ? b : inProcessBrokers.get(name);
    if (!found) throw new Error(`broker ${name} has not been started`);
    return found;
  };
  const start = async (name: BrokerName) => {
    // A broker started again while its last instance still runs (a test that failed before stopping it) replaces it: nothing outlives the run.
    if (!stopped.has(name) && (name === 'b' ? b : inProcessBrokers.get(name))) await stopBroker(name);
    if (name === 'b') {
      const child = new CliProcess(processArgs());
      b = child;
      await child.waitForOutput(/broker joined the cluster/);
    } else {
      inProcessBrokers.set(name, await inProcess(name));
    }
    stopped.delete(name);
    stopping.delete(name);
  };
  const stopBroker = (name: BrokerName, killAfterMs?: number) => {
    let done = stopping.get(name);
    if (!done) {
      stopped.add(name);
      const broker = name === 'b' ? b : inProcessBrokers.get(name);
      done = broker ? (name === 'b' ? (broker as CliProcess).stop(killAfterMs) : broker.stop()) : Promise.resolve();
      stopping.set(name, done);
    }
    return done;
  };
  // The signer first: the others wait for it to certify their bus keys.
  for (const name of options.oneSigner ? (['b', 'a', 'c'] as const) : NAMES) if (!stopped.has(name)) await start(name);

  const agents: Agent[] = [];
  const order: BrokerName[] = ['a', 'b', 'c'];
  return {
    nats,
    busToken,
    storeUrl: database.url,
    caFiles: { cert: caCertFile, key: caKeyFile },
    get a() {
      return first('a') as Broker;
    },
    get c() {
      return first('c') as Broker;
    },
    get b() {
      return first('b') as CliProcess;
    },
    address,
    mcpUrl,
    async addAgent(name, firstBroker, agentOptions = {}) {
      const startAt = order.indexOf(firstBroker);
      const dial =
        agentOptions.dial ??
        [...order.slice(startAt), ...order.slice(0, startAt)]
          .map((broker) => address[broker])
          .filter((entry, i, all) => all.indexOf(entry) === i)
          .join(',');
      const watchers = (['a', 'c'] as const).filter((broker) => !stopped.has(broker)).map((broker) => inProcessBrokers.get(broker) as Broker);
      const tokenStore = (watchers[0] as Broker).store;
      const agent = await Agent.start(
        {
          dataDir: join(temp.path, 'agents', name),
          brokerAddress: dial,
          token: (await createJoinToken(tokenStore, { ttlMs: 60_000, uses: 1, labels: {}, roles: agentOptions.roles ?? [] })).token,
          caPin: (watchers[0] as Broker).authority.pin,
          name,
          ...TEST_AGENT_DEFAULTS,
          ...agentOptions.agent,
        },
        silentLogger,
        agentOptions.collectors ?? [],
      );
      agents.push(agent);
      await waitFor(() => watchers.every((broker) => broker.registry.find(name)?.state === 'online'), { what: `${name} online on a and c` });
      return agent;
    },
    running: (name) => !stopped.has(name),
    stopBroker,
    startBroker: start,
    stopC: () => stopBroker('c'),
    async stop() {
      await Promise.all(agents.map((agent) => agent.stop()));
      for (const name of NAMES) await stopBroker(name);
      await nats.stop();
      await database.drop();
      temp.remove();
    },
  };
}
