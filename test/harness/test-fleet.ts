import { join } from 'node:path';
import { Agent, type CollectorChoice } from '../../agent/agent.ts';
import type { AgentOptions } from '../../agent/agent-options.ts';
import { Broker } from '../../broker/broker.ts';
import { type BrokerOptions, inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { createJoinToken, type JoinTokenOptions } from '../../broker/enrollment/join-tokens.ts';
import { type Logger, silentLogger } from '../../shared/log/logger.ts';
import type { KeyPair } from '../../shared/pki/certificates.ts';
import { freePort } from './free-port.ts';
import { makeTempDir } from './temp-dir.ts';
import { TEST_AGENT_DEFAULTS } from './test-agent-defaults.ts';
import { nextEvent } from './wait.ts';

/**
 * A broker on a loopback port with its own data dir, and in-process agents
 * enrolled with real join tokens over real mTLS. Everything it starts, it
 * stops: call `stop()` in afterEach/afterAll.
 */
export interface TestFleet {
  broker: Broker;
  root: string;
  /** host:port agents dial. */
  address: string;
  pin: string;
  token(options?: Partial<JoinTokenOptions>): Promise<string>;
  /** Enrolls (first time) and connects an in-process agent, resolving once it is online. */
  addAgent(
    name: string,
    options?: Partial<AgentOptions> & { collectors?: CollectorChoice; log?: Logger; waitOnline?: boolean; newKeys?: () => Promise<KeyPair> },
  ): Promise<Agent>;
  agentDir(name: string): string;
  /** The `fleetmesh agent` arguments that enroll an agent process with a fresh token, in its own data dir. */
  agentArgs(name: string): Promise<string[]>;
  /** Stops the broker (keeping its data dir) and starts a new one on the same port and data dir, with any options changed. */
  restartBroker(changes?: Partial<BrokerOptions>): Promise<Broker>;
  stopAgent(agent: Agent): Promise<void>;
  stop(): Promise<void>;
}

/** The CA key secret of the tests' brokers on a shared store (it seals the CA key there). */
export const TEST_CA_KEY_SECRET = 'fleetmesh-test-ca-key-secret-0123456789';

export function brokerOptions(dataDir: string, overrides: Partial<BrokerOptions> = {}): BrokerOptions {
  return inProcessBrokerOptions(dataDir, { operationsLevel: 3, heartbeatIntervalMs: 200, storePollMs: 100, ...overrides });
}

/** `root`: a directory to hold the broker's and agents' data dirs (a small file system, say) instead of a fresh temp dir. */
export async function startTestFleet(overrides: Partial<BrokerOptions> & { log?: Logger; root?: string } = {}): Promise<TestFleet> {
  const temp = overrides.root ? { path: overrides.root, remove: () => {} } : makeTempDir();
  const brokerDir = join(temp.path, 'broker');
  const log = overrides.log ?? silentLogger;
  // Ports outside the kernel's ephemeral range, so none is taken by another socket while the broker restarts.
  const ports = { grpcListen: `127.0.0.1:${await freePort()}`, mcpListen: `127.0.0.1:${await freePort()}` };
  let options = brokerOptions(brokerDir, { ...ports, ...overrides });
  let broker: Broker;
  try {
    broker = await Broker.start(options, log);
  } catch (error) {
    // A broker that refuses to start (a test of that) leaves no directory behind.
    temp.remove();
    throw error;
  }
  // Later restarts keep the ports, so agents and MCP clients find the broker where they left it.
  options = { ...options, grpcListen: `127.0.0.1:${broker.grpcPort}`, mcpListen: `127.0.0.1:${broker.mcp.port}` };
  const agents = new Set<Agent>();
  const fleet: TestFleet = {
    get broker() {
      return broker;
    },
    root: temp.path,
    address: `localhost:${broker.grpcPort}`,
    pin: broker.authority.pin,
    token: async (tokenOptions = {}) => (await createJoinToken(broker.store, { ttlMs: 60_000, uses: 1, labels: {}, ...tokenOptions })).token,
    agentDir: (name) => join(temp.path, 'agents', name),
    agentArgs: async (name) => [
      'agent',
      '--broker',
      fleet.address,
      '--token',
      await fleet.token(),
      '--ca-pin',
      fleet.pin,
      '--name',
      name,
      '--data-dir',
      fleet.agentDir(name),
    ],
    async addAgent(name, agentOptions = {}) {
      const { collectors, log: agentLog, waitOnline = true, newKeys, ...rest } = agentOptions;
      const agent = await Agent.start(
        {
          dataDir: fleet.agentDir(name),
          brokerAddress: fleet.address,
          token: await fleet.token(),
          caPin: fleet.pin,
          name,
          ...TEST_AGENT_DEFAULTS,
          ...rest,
        },
        agentLog ?? silentLogger,
        collectors ?? [],
        newKeys ? { newKeys } : {},
      );
      agents.add(agent);
      // An agent whose first dials failed while the machine was loaded (other test files, a fleet of 200 enrolling
      // at once) comes back after its backoff, up to 15 s a try: 20 s was not always enough for a second try.
      if (waitOnline && !agent.connection.connected) await nextEvent(agent.connection, 'connected', 60_000);
      return agent;
    },
    async restartBroker(changes = {}) {
      await broker.stop();
      options = { ...options, ...changes };
      broker = await Broker.start(options, log);
      return broker;
    },
    async stopAgent(agent) {
      agents.delete(agent);
      await agent.stop();
    },
    async stop() {
      await Promise.all([...agents].map((agent) => agent.stop()));
      agents.clear();
      await broker.stop();
      temp.remove();
    },
  };
  return fleet;
}
