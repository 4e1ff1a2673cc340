import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NatsServer } from '../../test/harness/nats-server.ts';
import { startPostgres } from '../../test/harness/postgres-server.ts';
import { BrokerProcess } from '../fleet/broker-process.ts';
import { startFleet } from '../fleet/fleet-processes.ts';
import { preEnroll } from '../mesh/bench-fleet.ts';
import { processUsage } from '../proc-stats.ts';
import { percentile, type ScenarioResult } from '../report.ts';

const HOST = fileURLToPath(new URL('./cluster-broker-host.ts', import.meta.url));

interface Stats {
  cpu_us: number;
  rss_bytes: number;
  held: number;
  reachable: number;
}

interface Figures {
  roundP50Ms: number;
  roundP99Ms: number;
  /** CPU of every broker during the measured rounds, per agent and round. */
  cpuUsPerAgentRound: number;
  /** Resident memory every broker gained while the agents connected, per agent. */
  rssKibPerAgent: number;
  connectS: number;
  /** From the SIGKILL of one broker until every agent is held again (by the others, or the restarted single broker). */
  backAfterKillS: number;
  failedHostCalls: number;
}

/** Polls `count` until it reaches `target`, printing it every 15 s; fails with the last count after `timeoutMs`. */
async function until(count: () => Promise<number>, target: number, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  let printedAt = started;
  for (;;) {
    const now = await count();
    if (now === target) return;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}: ${now} of ${target} after ${timeoutMs / 1000} s`);
    if (Date.now() - printedAt >= 15_000) {
      printedAt = Date.now();
      process.stderr.write(`    ${what}: ${now} of ${target} after ${Math.round((printedAt - started) / 1000)} s\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const stats = (broker: BrokerProcess) => broker.request<Stats>('stats');
/** The same after a full collection in the broker: for the figures, not for progress polls. */
const settledStats = (broker: BrokerProcess) => broker.request<Stats>('stats', { gc: true });
const heldBy = async (brokers: BrokerProcess[]) => (await Promise.all(brokers.map(stats))).reduce((sum, s) => sum + s.held, 0);

/**
 * One layout (one SQLite broker, or three brokers on PostgreSQL and NATS) with
 * the same simulated fleet: every agent dials the brokers in turn, starting
 * with a different one, so the fleet spreads over them. Rounds of agent.info
 * to every agent go through the first broker; then the last broker is killed.
 */
async function measure(
  layout: { brokers: BrokerProcess[]; dataDirs: string[]; args: (i: number) => string[] },
  /** The enrolled fleet as preEnroll made it, in a file for the fleet's processes to read, and how many agents it holds. */
  fleet: { file: string; count: number },
  rounds: number,
): Promise<Figures> {
  const { brokers } = layout;
  let fleets: BrokerProcess[] = [];
  try {
    const ports = (await Promise.all(brokers.map((broker) => broker.ready))).map((ready) => ready.port as number);
    const addresses = ports.map((port) => `localhost:${port}`);
    const idle = await Promise.all(brokers.map(settledStats));
    const { count } = fleet;
    const connectStarted = performance.now();
    fleets = await startFleet(fleet.file, count, addresses);
    await until(() => heldBy(brokers), count, 600_000, 'agents connected');
    // The first broker must be able to call every agent, including those the others hold.
    await until(async () => (await stats(brokers[0] as BrokerProcess)).reachable, count, 300_000, 'agents the first broker reaches');
    const connectS = (performance.now() - connectStarted) / 1000;
    // One broker at a time: a full collection of three brokers' heaps at once held all their loops 20–24 s on two
    // cores, past the bus's 10 s write deadline, and the rounds then measured brokers cut off from the bus.
    const connected: Stats[] = [];
    for (const broker of brokers) connected.push(await settledStats(broker));
    await until(async () => (await stats(brokers[0] as BrokerProcess)).reachable, count, 300_000, 'agents the first broker reaches');
    const driver = brokers[0] as BrokerProcess;
    for (let i = 0; i < 3; i++) await driver.request('fanout', { timeoutMs: 30_000 });
    const cpuBefore = brokers.map((broker) => processUsage(broker.pid).cpuMs);
    const durations: number[] = [];
    let failed = 0;
    for (let i = 0; i < rounds; i++) {
      const round = await driver.request<{ duration_ms: number; ok: number; total: number; first_error?: string }>('fanout', { timeoutMs: 30_000 });
      durations.push(round.duration_ms);
      failed += round.total - round.ok;
      if (round.first_error)
        process.stderr.write(`  round ${i + 1}: ${round.total - round.ok} of ${round.total} calls failed, the first with ${round.first_error}\n`);
    }
    const cpuMs = brokers.reduce((sum, broker, i) => sum + processUsage(broker.pid).cpuMs - (cpuBefore[i] ?? 0), 0);

    const victim = brokers.length - 1;
    const killedAt = performance.now();
    await (brokers[victim] as BrokerProcess).kill();
    if (brokers.length === 1) {
      // A single broker comes back only when it is started again (on its port, so its agents find it).
      brokers[victim] = new BrokerProcess(HOST, layout.dataDirs[victim] as string, [String(ports[victim]), ...layout.args(victim).slice(1)]);
      await (brokers[victim] as BrokerProcess).ready;
    }
    const survivors = brokers.length === 1 ? brokers : brokers.filter((_, i) => i !== victim);
    await until(() => heldBy(survivors), count, 600_000, 'agents back after the kill');
    const backAfterKillS = (performance.now() - killedAt) / 1000;
    return {
      roundP50Ms: percentile(durations, 50),
      roundP99Ms: percentile(durations, 99),
      cpuUsPerAgentRound: (cpuMs * 1000) / rounds / count,
      rssKibPerAgent: connected.reduce((sum, s, i) => sum + s.rss_bytes - (idle[i]?.rss_bytes ?? 0), 0) / 1024 / count,
      connectS,
      backAfterKillS,
      failedHostCalls: failed,
    };
  } finally {
    await Promise.all(fleets.map((fleet) => fleet.stop().catch(() => {})));
    await Promise.all(brokers.map((broker) => broker.stop().catch(() => {})));
  }
}

/** The two layouts the bench compares; `--cluster-layouts` may name one. */
export const LAYOUTS = ['single', 'cluster'] as const;
export type Layout = (typeof LAYOUTS)[number];

/** A layout's figures, or why it gave none (its fleet never all connected, say): the other layout is measured all the same. */
type Outcome = Figures | { error: string };

async function attempt(run: () => Promise<Figures>): Promise<Outcome> {
  try {
    return await run();
  } catch (error) {
    process.stderr.write(`  not measured: ${(error as Error).message}\n`);
    return { error: (error as Error).message };
  }
}

/** One figure of a layout; NaN for a layout not run or not measured, so that no ratio is made of it. */
function figure(outcome: Outcome | undefined, key: keyof Figures): number {
  return outcome && !('error' in outcome) ? outcome[key] : Number.NaN;
}

/** Each figure's name in the report, for the single broker, the cluster and (when they are compared) their ratio. */
const REPORTED: readonly [keyof Figures, string, string, string?][] = [
  ['roundP50Ms', 'single_round_p50_ms', 'cluster_round_p50_ms', 'ratio_round_p50'],
  ['roundP99Ms', 'single_round_p99_ms', 'cluster_round_p99_ms', 'ratio_round_p99'],
  ['cpuUsPerAgentRound', 'single_broker_cpu_us_per_agent_per_round', 'cluster_brokers_cpu_us_per_agent_per_round', 'ratio_cpu_per_agent_round'],
  ['rssKibPerAgent', 'single_broker_rss_kib_per_agent', 'cluster_brokers_rss_kib_per_agent', 'ratio_rss_per_agent'],
  ['backAfterKillS', 'single_back_after_kill_s', 'cluster_back_after_kill_s', 'ratio_back_after_kill'],
  ['connectS', 'single_connect_s', 'cluster_connect_s'],
  ['failedHostCalls', 'single_failed_host_calls', 'cluster_failed_host_calls'],
];

/** Both layouts' figures side by side, and the cluster's over the single broker's where they are compared. */
function sideBySide({ single, cluster }: Partial<Record<Layout, Outcome>>): Record<string, number> {
  return Object.fromEntries(
    REPORTED.flatMap(([key, singleName, clusterName, ratioName]) => {
      const [one, three] = [figure(single, key), figure(cluster, key)];
      return [[singleName, one], [clusterName, three], ...(ratioName ? [[ratioName, three / one]] : [])];
    }),
  );
}

function failures(outcomes: Partial<Record<Layout, Outcome>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(outcomes).flatMap(([layout, outcome]) => (outcome && 'error' in outcome ? [[`${layout}_not_measured`, outcome.error]] : [])),
  );
}

/**
 * 1 broker on SQLite vs 3 brokers on PostgreSQL and NATS, with the same
 * number of simulated agents (the real connection loop, each with its own TLS
 * connection, in processes of their own, one per 2,500 agents): fan-out round p50/p99, broker CPU per
 * agent per round (all brokers together), broker RSS per agent (all brokers
 * together: every broker keeps every agent in its registry), and how long all
 * agents need to be held again after a broker is SIGKILLed (the single broker
 * restarted at once; in the cluster, the others take its agents).
 */
export async function clusterScenario(agentCount: number, rounds: number, layouts: readonly Layout[] = LAYOUTS): Promise<ScenarioResult> {
  const temp = mkdtempSync(join(tmpdir(), 'fm-bench-cluster-'));
  const postgres = await startPostgres();
  const busToken = randomBytes(16).toString('hex');
  // With BENCH_BROKER_LOG the bus logs too (a slow consumer it cut off is said there, not to the broker).
  const natsLog = process.env.BENCH_BROKER_LOG ? ['--log', join(process.env.BENCH_BROKER_LOG, 'nats-server.log')] : [];
  const nats = await NatsServer.start(['--auth', busToken, ...natsLog]);
  try {
    const outcomes: Partial<Record<Layout, Outcome>> = {};
    if (layouts.includes('single')) {
      process.stderr.write(`  single broker (SQLite): enrolling ${agentCount} simulated agents…\n`);
      const singleDir = join(temp, 'single');
      const singleFleet = await preEnroll(singleDir, agentCount);
      process.stderr.write(`  single broker: connecting, ${rounds} fan-out rounds, SIGKILL and restart…\n`);
      const singleFile = join(temp, 'single-fleet.json');
      writeFileSync(singleFile, JSON.stringify(singleFleet));
      outcomes.single = await attempt(() =>
        measure(
          { brokers: [new BrokerProcess(HOST, singleDir, ['0'])], dataDirs: [singleDir], args: () => ['0'] },
          { file: singleFile, count: agentCount },
          rounds,
        ),
      );
    }

    if (layouts.includes('cluster')) {
      process.stderr.write(`  three brokers (PostgreSQL + NATS): enrolling ${agentCount} simulated agents…\n`);
      const database = await postgres.createDatabase();
      const dirs = ['c0', 'c1', 'c2'].map((name) => join(temp, name));
      const clusterFleet = await preEnroll(dirs[0] as string, agentCount, database.url);
      const caKeySecret = randomBytes(24).toString('hex');
      const args = (i: number) => ['0', database.url, nats.url.replace('nats://', `nats://${busToken}@`), `bench-${i}`, caKeySecret, dirs[0] as string];
      // The first broker puts the CA into the store; the others take it from there.
      const first = new BrokerProcess(HOST, dirs[0] as string, args(0));
      await first.ready;
      const brokers = [first, new BrokerProcess(HOST, dirs[1] as string, args(1)), new BrokerProcess(HOST, dirs[2] as string, args(2))];
      process.stderr.write(`  three brokers: connecting, ${rounds} fan-out rounds through the first, SIGKILL of the third…\n`);
      const clusterFile = join(temp, 'cluster-fleet.json');
      writeFileSync(clusterFile, JSON.stringify(clusterFleet));
      outcomes.cluster = await attempt(() => measure({ brokers, dataDirs: dirs, args }, { file: clusterFile, count: agentCount }, rounds));
      await database.drop();
    }

    return {
      scenario: `cluster, ${agentCount} agents: 3 brokers on PostgreSQL + NATS vs 1 broker on SQLite (same run)`,
      figures: {
        agents: agentCount,
        rounds,
        ...failures(outcomes),
        ...sideBySide(outcomes),
        // The simulated fleet, both databases and every broker share this machine's cores with whatever else runs.
        machine_load_1m_at_end: loadavg()[0] ?? Number.NaN,
      },
    };
  } finally {
    await nats.stop();
    postgres.stop();
    rmSync(temp, { recursive: true, force: true });
  }
}
