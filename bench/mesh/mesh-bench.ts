import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../../shared/version.ts';
import { BENCH_SAMPLE } from '../fleet/bench-sample.ts';
import { BrokerProcess } from '../fleet/broker-process.ts';
import { buildDist } from '../fleet/build-dist.ts';
import { percentile, type ScenarioResult } from '../report.ts';
import { preEnroll } from './bench-fleet.ts';
import { ECHO_REPLY_BYTES, ECHO_SERVICE } from './echo-service.ts';

const BROKER_HOST = fileURLToPath(new URL('./broker-host.ts', import.meta.url));
const ECHO_HOST = fileURLToPath(new URL('./echo-host.ts', import.meta.url));
const EchoClient = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Echo');

/** A simulated agent: the real connection loop and dispatcher, answering agent.info from memory. */
function simulatedAgent(
  identity: Awaited<ReturnType<typeof preEnroll>>['agents'][number],
  shared: { keys: { privateKeyPem: string }; caCertificatePem: string },
  address: string,
) {
  const dispatcher = new Dispatcher(silentLogger);
  const startedAt = Date.now();
  dispatcher.register(agentInfo, async () => ({
    payload: {
      agent_id: identity.agentId,
      name: identity.name,
      version: FLEETMESH_VERSION,
      protocol_version: PROTOCOL_VERSION,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      started_at_unix_ms: startedAt,
      collectors: [
        { name: 'system', available: true, reason: '' },
        { name: 'docker', available: true, reason: '' },
      ],
      labels: { role: 'sim', zone: 'bench' },
      facts: { hostname: identity.name, os: 'Debian GNU/Linux 12 (bookworm)', kernel: '6.1.0', arch: 'x64', cpu_cores: 8, memory_total_bytes: 8_200_000_000 },
      sample: BENCH_SAMPLE,
      certificate_not_after_unix_ms: identity.notAfter.getTime(),
    },
  }));
  return new BrokerConnection({
    dataDir: '/nonexistent',
    identity: { ...identity, brokerAddress: address, caCertificatePem: shared.caCertificatePem, privateKeyPem: shared.keys.privateKeyPem },
    dispatcher,
    hello: () => ({ agentVersion: FLEETMESH_VERSION, protocolVersion: PROTOCOL_VERSION, actions: dispatcher.actions(), name: identity.name }),
    sample: () => BENCH_SAMPLE,
    log: silentLogger,
    backoffBaseMs: 500,
    backoffCapMs: 30_000,
  });
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How long the bench waits after the rounds before measuring what the connections hold. */
const SETTLE_MS = 15_000;

/** What a host process says of itself: CPU, RSS, heap, connections online. */
type Stats = Record<string, number>;

/** One side of the comparison, the broker's agents or the bare streams: connected, then rounds. */
interface Fleet {
  server: BrokerProcess;
  count: number;
  idle: Stats;
  connected: Stats;
  connectWallMs: number;
  durations: number[];
  cpu: number[];
  failures: number;
}

interface RoundFigures {
  rssKibPerConnection: number;
  settledRssKibPerConnection: number;
  heapKibPerConnection: number;
  cpuMsPerConnect: number;
  connectWallS: number;
  roundP50Ms: number;
  roundP99Ms: number;
  cpuMsPerRound: number;
  failures: number;
}

/** Connects a fleet to its server (what the connections cost is measured here), then warm-up rounds. */
async function connectFleet(server: BrokerProcess, count: number, connect: () => void): Promise<Fleet> {
  const idle = await server.request('stats');
  const connectStarted = performance.now();
  connect();
  await waitUntil(async () => (await server.request('stats')).online === count, 300_000);
  const connectWallMs = performance.now() - connectStarted;
  const connected = await server.request('stats');
  for (let i = 0; i < 3; i++) await server.request('fanout', { timeoutMs: 30_000 });
  return { server, count, idle, connected, connectWallMs, durations: [], cpu: [], failures: 0 };
}

async function round(fleet: Fleet): Promise<void> {
  const result = await fleet.server.request('fanout', { timeoutMs: 30_000 });
  fleet.durations.push(result.duration_ms ?? 0);
  fleet.cpu.push(result.cpu_us ?? 0);
  fleet.failures += (result.total ?? 0) - (result.ok ?? 0);
}

function figures(fleet: Fleet, settled: Stats): RoundFigures {
  const { idle, connected, count } = fleet;
  return {
    rssKibPerConnection: ((connected.rss_bytes ?? 0) - (idle.rss_bytes ?? 0)) / 1024 / count,
    settledRssKibPerConnection: ((settled.rss_bytes ?? 0) - (idle.rss_bytes ?? 0)) / 1024 / count,
    heapKibPerConnection: ((connected.heap_used_bytes ?? 0) - (idle.heap_used_bytes ?? 0)) / 1024 / count,
    cpuMsPerConnect: ((connected.cpu_us ?? 0) - (idle.cpu_us ?? 0)) / 1000 / count,
    connectWallS: fleet.connectWallMs / 1000,
    roundP50Ms: percentile(fleet.durations, 50),
    roundP99Ms: percentile(fleet.durations, 99),
    cpuMsPerRound: percentile(fleet.cpu, 50) / 1000,
    failures: fleet.failures,
  };
}

/** N bare grpc-js echo streams over mutual TLS, each on its own channel, answering every message with a reply. */
function connectEchoStreams(port: number, enrolled: Awaited<ReturnType<typeof preEnroll>>, clients: grpc.Client[]): void {
  const reply = Buffer.alloc(ECHO_REPLY_BYTES, 2);
  for (const agent of enrolled.agents) {
    const credentials = grpc.credentials.createSsl(
      Buffer.from(enrolled.caCertificatePem),
      Buffer.from(enrolled.keys.privateKeyPem),
      Buffer.from(agent.certificatePem),
    );
    const client = new EchoClient(`localhost:${port}`, credentials, {
      'grpc.use_local_subchannel_pool': 1,
      'grpc.enable_retries': 0,
      'grpc.keepalive_time_ms': 20_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.keepalive_permit_without_calls': 1,
      'grpc.enable_channelz': 0,
    });
    clients.push(client);
    const stream = (client as unknown as { stream: () => grpc.ClientDuplexStream<Buffer, Buffer> }).stream();
    stream.on('error', () => {});
    stream.on('data', () => stream.write(reply));
    // The stream opens on the first message: announce ourselves as an agent's Hello does.
    stream.write(Buffer.alloc(1));
  }
}

/**
 * N simulated agents, each with its own channel and TLS connection, connect to
 * a broker in its own process; then rounds of agent.info to all of them.
 */
export async function meshScenario(agentCount: number, rounds: number, profileDir?: string): Promise<ScenarioResult> {
  await buildDist();
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-mesh-'));
  const connections: BrokerConnection[] = [];
  const clients: grpc.Client[] = [];
  process.stderr.write(`  enrolling ${agentCount} simulated agents…\n`);
  // Enrolled before the broker starts, as they would be after a restart.
  const enrolled = await preEnroll(dataDir, agentCount);
  const echo = new BrokerProcess(ECHO_HOST, dataDir);
  const broker = new BrokerProcess(BROKER_HOST, dataDir);
  try {
    process.stderr.write(`  baseline: ${agentCount} bare grpc-js echo streams over mTLS…\n`);
    const echoPort = ((await echo.ready) as { port: number }).port;
    const bareFleet = await connectFleet(echo, agentCount, () => connectEchoStreams(echoPort, enrolled, clients));
    const { port } = (await broker.ready) as { port: number };
    process.stderr.write(`  broker: ${agentCount} agents over mTLS; ${rounds} fan-out rounds, each beside a round of the baseline…\n`);
    const meshFleet = await connectFleet(broker, agentCount, () => {
      for (const identity of enrolled.agents) {
        const connection = simulatedAgent(identity, enrolled, `localhost:${port}`);
        connections.push(connection);
        connection.start();
      }
    });
    // Rounds alternate between the two, so that the machine's speed, which drifts over minutes, is the same for both.
    if (profileDir) await broker.request('profile-start');
    for (let i = 0; i < rounds; i++) {
      await round(bareFleet);
      await round(meshFleet);
    }
    if (profileDir) {
      await broker.request('profile-stop', { path: join(profileDir, `broker-${agentCount}-agents-fanout.cpuprofile`) });
      // After the rounds: writing the snapshot stops the broker's loop for seconds, long enough for agents' keepalive to
      // give up on it, and their reconnects would otherwise land in the profiled rounds.
      await broker.request('heap-snapshot', { path: join(profileDir, `broker-${agentCount}-agents.heapsnapshot`) });
    }
    // What a connection holds once the rounds' and the connects' garbage is gone: the allocator returns freed memory over seconds.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const bare = figures(bareFleet, await echo.request('stats'));
    const mesh = figures(meshFleet, await broker.request('stats'));
    const cpuUsPerAgentRound = (mesh.cpuMsPerRound * 1000) / agentCount;
    const bareCpuUsPerAgentRound = (bare.cpuMsPerRound * 1000) / agentCount;
    return {
      scenario: `mesh, ${agentCount} agents (bare: grpc-js mTLS echo streams, same process layout, rounds alternated)`,
      figures: {
        agents: agentCount,
        rounds,
        broker_rss_kib_per_agent: mesh.rssKibPerConnection,
        bare_rss_kib_per_stream: bare.rssKibPerConnection,
        broker_rss_kib_per_agent_settled: mesh.settledRssKibPerConnection,
        bare_rss_kib_per_stream_settled: bare.settledRssKibPerConnection,
        broker_heap_kib_per_agent: mesh.heapKibPerConnection,
        bare_heap_kib_per_stream: bare.heapKibPerConnection,
        'target: broker RSS per agent': '≤ 64 KiB',
        broker_cpu_us_per_agent_per_round: cpuUsPerAgentRound,
        bare_cpu_us_per_stream_per_round: bareCpuUsPerAgentRound,
        ratio_cpu_broker_over_bare: cpuUsPerAgentRound / bareCpuUsPerAgentRound,
        'target: broker CPU per agent per round': '≤ 50 µs and ≤ 1.5× bare',
        fanout_round_p50_ms: mesh.roundP50Ms,
        fanout_round_p99_ms: mesh.roundP99Ms,
        bare_round_p50_ms: bare.roundP50Ms,
        bare_round_p99_ms: bare.roundP99Ms,
        broker_cpu_ms_per_connect: mesh.cpuMsPerConnect,
        bare_cpu_ms_per_connect: bare.cpuMsPerConnect,
        connect_wall_s: mesh.connectWallS,
        failed_host_calls: mesh.failures,
      },
    };
  } finally {
    await Promise.all(connections.map((c) => c.stop()));
    for (const client of clients) client.close();
    await broker.stop().catch(() => {});
    await echo.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}
