import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BrokerProcess } from '../fleet/broker-process.ts';
import { buildDist } from '../fleet/build-dist.ts';
import { FLEET_SHARE } from '../fleet/fleet-processes.ts';
import { percentile, type ScenarioResult } from '../report.ts';
import { preEnroll } from './bench-fleet.ts';

const BROKER_HOST = fileURLToPath(new URL('./broker-host.ts', import.meta.url));
const ECHO_HOST = fileURLToPath(new URL('./echo-host.ts', import.meta.url));
const SIMULATOR_HOST = fileURLToPath(new URL('./simulator-host.ts', import.meta.url));

/** How long a fleet may take to be online in full. */
const CONNECT_TIMEOUT_MS = 300_000;

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

/** What the broker's admission gate holds and did, for the progress lines (the bare server has no gate). */
function gateLine(stats: Stats): string {
  const gate = Object.entries(stats).filter(([key]) => key.startsWith('gate_'));
  const loop = stats.loop_p99_ms === undefined ? '' : `; broker's event loop p99 ${stats.loop_p99_ms} ms`;
  return gate.length === 0 ? loop : `; gate: ${gate.map(([key, value]) => `${key.slice(5)} ${value}`).join(', ')}${loop}`;
}

/** Connects a fleet to its server (what the connections cost is measured here), then warm-up rounds. */
async function connectFleet(server: BrokerProcess, count: number, connect: () => Promise<unknown>, lag: () => Promise<string>): Promise<Fleet> {
  const idle = await server.request('stats', { gc: true });
  const connectStarted = performance.now();
  await connect();
  // Every connection online, saying how many are while it waits.
  const until = Date.now() + CONNECT_TIMEOUT_MS;
  let told = Date.now();
  for (let stats: Stats = {}, online = 0; online !== count; stats = await server.request('stats'), online = stats.online ?? 0) {
    if (Date.now() > until) throw new Error(`${online} of ${count} online after ${CONNECT_TIMEOUT_MS / 1000} s: ${gateLine(stats)}`);
    if (Date.now() - told > 15_000) {
      process.stderr.write(`    ${online} of ${count} online${gateLine(stats)}; simulators' event loop ${await lag()}…\n`);
      told = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const connectWallMs = performance.now() - connectStarted;
  const connected = await server.request('stats', { gc: true });
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

/** Simulated agents a simulator process holds at most, by default: one process per 2,500 agents (and as many bare streams). */
const AGENTS_PER_SIMULATOR = FLEET_SHARE;

/**
 * N simulated agents, each with its own channel and TLS connection, connect to
 * a broker in its own process; then rounds of agent.info to all of them. The
 * simulated agents and the bare streams run in `simulators` processes apart
 * from the broker's (by default one per 2,500 agents), each holding an equal
 * slice of both.
 */
export async function meshScenario(
  agentCount: number,
  rounds: number,
  profileDir?: string,
  simulators = Math.ceil(agentCount / AGENTS_PER_SIMULATOR),
): Promise<ScenarioResult> {
  await buildDist();
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-mesh-'));
  process.stderr.write(`  enrolling ${agentCount} simulated agents…\n`);
  // Enrolled before the broker starts, as they would be after a restart.
  const enrolled = await preEnroll(dataDir, agentCount);
  const identities = join(dataDir, 'simulated-agents.json');
  writeFileSync(identities, JSON.stringify(enrolled));
  const echo = new BrokerProcess(ECHO_HOST, dataDir);
  const broker = new BrokerProcess(BROKER_HOST, dataDir);
  const sims = Array.from({ length: Math.max(1, simulators) }, () => new BrokerProcess(SIMULATOR_HOST, identities));
  // Each simulator's slice of the agents, as [start, end).
  const slices = sims.map((_, i) => [Math.floor((agentCount * i) / sims.length), Math.floor((agentCount * (i + 1)) / sims.length)] as const);
  const lag = async () => {
    const each = (await Promise.all(sims.map((sim) => sim.request('lag')))) as Stats[];
    return each.map((one) => `p99 ${Math.round(one.p99_ms ?? 0)} ms max ${Math.round(one.max_ms ?? 0)} ms`).join(' | ');
  };
  const connectAll = (kind: 'bare' | 'mesh', port: number) =>
    Promise.all(sims.map((sim, i) => sim.request('connect', { kind, address: `localhost:${port}`, port, start: slices[i]?.[0], end: slices[i]?.[1] })));
  try {
    await Promise.all(sims.map((sim) => sim.ready));
    process.stderr.write(`  baseline: ${agentCount} bare grpc-js echo streams over mTLS, from ${sims.length} simulator process(es)…\n`);
    const echoPort = ((await echo.ready) as { port: number }).port;
    const bareFleet = await connectFleet(echo, agentCount, () => connectAll('bare', echoPort), lag);
    const { port } = (await broker.ready) as { port: number };
    process.stderr.write(`  broker: ${agentCount} agents over mTLS; ${rounds} fan-out rounds, each beside a round of the baseline…\n`);
    const meshFleet = await connectFleet(broker, agentCount, () => connectAll('mesh', port), lag);
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
    const bare = figures(bareFleet, await echo.request('stats', { gc: true }));
    const mesh = figures(meshFleet, await broker.request('stats', { gc: true }));
    const cpuUsPerAgentRound = (mesh.cpuMsPerRound * 1000) / agentCount;
    const bareCpuUsPerAgentRound = (bare.cpuMsPerRound * 1000) / agentCount;
    return {
      scenario: `mesh, ${agentCount} agents (bare: grpc-js mTLS echo streams, same process layout, rounds alternated)`,
      figures: {
        agents: agentCount,
        simulator_processes: sims.length,
        rounds,
        broker_rss_kib_per_agent: mesh.rssKibPerConnection,
        bare_rss_kib_per_stream: bare.rssKibPerConnection,
        broker_rss_kib_per_agent_settled: mesh.settledRssKibPerConnection,
        bare_rss_kib_per_stream_settled: bare.settledRssKibPerConnection,
        broker_heap_kib_per_agent: mesh.heapKibPerConnection,
        bare_heap_kib_per_stream: bare.heapKibPerConnection,
        ratio_rss_broker_over_bare: mesh.rssKibPerConnection / bare.rssKibPerConnection,
        ratio_rss_broker_over_bare_settled: mesh.settledRssKibPerConnection / bare.settledRssKibPerConnection,
        'target: broker RSS per agent': '≤ 1.0× the bare stream',
        broker_cpu_us_per_agent_per_round: cpuUsPerAgentRound,
        bare_cpu_us_per_stream_per_round: bareCpuUsPerAgentRound,
        ratio_cpu_broker_over_bare: cpuUsPerAgentRound / bareCpuUsPerAgentRound,
        'target: broker CPU per agent per round': '≤ 1.3× the bare stream',
        fanout_round_p50_ms: mesh.roundP50Ms,
        fanout_round_p99_ms: mesh.roundP99Ms,
        bare_round_p50_ms: bare.roundP50Ms,
        bare_round_p99_ms: bare.roundP99Ms,
        'target: fan-out round p99': '≤ 3 s',
        broker_cpu_ms_per_connect: mesh.cpuMsPerConnect,
        bare_cpu_ms_per_connect: bare.cpuMsPerConnect,
        connect_wall_s: mesh.connectWallS,
        failed_host_calls: mesh.failures,
      },
    };
  } finally {
    await Promise.all(sims.map((sim) => sim.stop().catch(() => {})));
    await broker.stop().catch(() => {});
    await echo.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}
