import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import type { HostSample } from '../../shared/catalog/sample.ts';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../../shared/version.ts';
import { BrokerProcess } from '../fleet/broker-process.ts';
import { percentile, type ScenarioResult } from '../report.ts';
import { preEnroll } from './bench-fleet.ts';

const BROKER_HOST = fileURLToPath(new URL('./broker-host.ts', import.meta.url));

const SAMPLE: HostSample = {
  cpu_percent: 12.5,
  memory_percent: 41.2,
  memory_used_bytes: 3_400_000_000,
  memory_total_bytes: 8_200_000_000,
  disk_percent: 55.1,
  disk_mount: '/',
  load_1: 0.42,
  containers_running: 7,
  containers_total: 9,
  net_rx_bytes: 123_456_789,
  net_tx_bytes: 98_765_432,
  sampled_at_unix_ms: Date.now(),
};

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
      sample: SAMPLE,
      certificate_not_after_unix_ms: identity.notAfter.getTime(),
    },
  }));
  return new BrokerConnection({
    dataDir: '/nonexistent',
    identity: { ...identity, brokerAddress: address, caCertificatePem: shared.caCertificatePem, privateKeyPem: shared.keys.privateKeyPem },
    dispatcher,
    hello: () => ({ agentVersion: FLEETMESH_VERSION, protocolVersion: PROTOCOL_VERSION, actions: dispatcher.actions(), name: identity.name }),
    sample: () => SAMPLE,
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

/**
 * N simulated agents, each with its own channel and TLS connection, connect to
 * a broker in its own process; then rounds of agent.info to all of them.
 */
export async function meshScenario(agentCount: number, rounds: number, profileDir?: string): Promise<ScenarioResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-mesh-'));
  const connections: BrokerConnection[] = [];
  process.stderr.write(`  enrolling ${agentCount} simulated agents…\n`);
  // Enrolled before the broker starts, as they would be after a restart.
  const enrolled = await preEnroll(dataDir, agentCount);
  const broker = new BrokerProcess(BROKER_HOST, dataDir);
  try {
    const { port } = (await broker.ready) as { port: number };
    const idle = await broker.request('stats');

    process.stderr.write(`  connecting ${agentCount} agents over mTLS…\n`);
    const connectStarted = performance.now();
    for (const identity of enrolled.agents) {
      const connection = simulatedAgent(identity, enrolled, `localhost:${port}`);
      connections.push(connection);
      connection.start();
    }
    await waitUntil(async () => (await broker.request('stats')).online === agentCount, 300_000);
    const connectWallMs = performance.now() - connectStarted;
    const connected = await broker.request('stats');

    process.stderr.write(`  ${rounds} fan-out rounds…\n`);
    for (let i = 0; i < 3; i++) await broker.request('fanout', { timeoutMs: 30_000 });
    if (profileDir) await broker.request('heap-snapshot', { path: join(profileDir, `broker-${agentCount}-agents.heapsnapshot`) });
    if (profileDir) await broker.request('profile-start');
    const durations: number[] = [];
    const cpu: number[] = [];
    let failures = 0;
    for (let i = 0; i < rounds; i++) {
      const round = await broker.request('fanout', { timeoutMs: 30_000 });
      durations.push(round.duration_ms ?? 0);
      cpu.push(round.cpu_us ?? 0);
      failures += (round.total ?? 0) - (round.ok ?? 0);
    }
    if (profileDir) await broker.request('profile-stop', { path: join(profileDir, `broker-${agentCount}-agents-fanout.cpuprofile`) });
    const connectCpuUs = (connected.cpu_us ?? 0) - (idle.cpu_us ?? 0);
    return {
      scenario: `mesh, ${agentCount} agents`,
      figures: {
        agents: agentCount,
        broker_cpu_ms_per_connect: connectCpuUs / 1000 / agentCount,
        connect_wall_s: connectWallMs / 1000,
        broker_rss_idle_mib: (idle.rss_bytes ?? 0) / 2 ** 20,
        broker_rss_connected_mib: (connected.rss_bytes ?? 0) / 2 ** 20,
        broker_rss_kib_per_agent: ((connected.rss_bytes ?? 0) - (idle.rss_bytes ?? 0)) / 1024 / agentCount,
        fanout_round_p50_ms: percentile(durations, 50),
        fanout_round_p99_ms: percentile(durations, 99),
        broker_cpu_ms_per_round: percentile(cpu, 50) / 1000,
        rounds,
        failed_host_calls: failures,
      },
    };
  } finally {
    await Promise.all(connections.map((c) => c.stop()));
    await broker.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}
