import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RECONNECT_BACKOFF } from '../../agent/connection/backoff.ts';
import { BrokerConnection } from '../../agent/connection/broker-connection.ts';
import { Dispatcher } from '../../agent/dispatcher/dispatcher.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { FLEETMESH_VERSION, PROTOCOL_VERSION } from '../../shared/version.ts';
import { BENCH_SAMPLE } from '../fleet/bench-sample.ts';
import { buildDist } from '../fleet/build-dist.ts';
import { preEnroll } from '../mesh/bench-fleet.ts';
import { percentile, type ScenarioResult } from '../report.ts';
import { listenDrops } from './listen-drops.ts';

const RUN_TS = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));
const BROKER = fileURLToPath(new URL('./reconnect-broker.ts', import.meta.url));

type Stats = { id: number; cpu_us: number; loop_active_ms: number; loop_idle_ms: number; online?: number; port?: number };

/** One broker process: ready when it listens, answering stats over IPC. */
class BrokerProcess {
  readonly child: ChildProcess;
  /** Settles when the broker listens, with its port, its CPU time so far and the moment (performance.now()). */
  readonly listening: Promise<Stats & { at: number }>;
  private readonly waiting = new Map<number, (stats: Stats) => void>();
  private nextId = 1;

  /** With `profileDir`, the process writes its CPU profile to its `broker-reconnect-storm/` as it exits. */
  constructor(dataDir: string, port: number, profileDir?: string) {
    // One profile per thread (the TypeScript loader has one of its own), named by Node: the broker's is the main thread's (`.0.` in its name).
    const execArgv = [...process.execArgv, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'broker-reconnect-storm')] : [])];
    this.child = fork(RUN_TS, [BROKER, dataDir, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
    this.listening = new Promise((resolve, reject) => {
      this.child.once('exit', (code) => reject(new Error(`the broker exited with ${code} before listening`)));
      this.waiting.set(0, (stats) => resolve({ ...stats, at: performance.now() }));
    });
    this.child.on('message', (message: Stats) => {
      this.waiting.get(message.id)?.(message);
      this.waiting.delete(message.id);
    });
  }

  stats(): Promise<Stats> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ id, type: 'stats' });
    });
  }

  /** SIGTERM: the broker tells its agents when to come back, then exits. */
  async terminate(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

/**
 * N simulated agents (the real connection loop, backoff and all, each with its
 * own channel and TLS connection) connect to a broker process; the broker is
 * stopped with SIGTERM and a new one started on the same port and data dir.
 * Reports how long after the new broker listens 50, 90 and 100 % of the fleet
 * are back, and the new broker's CPU over that storm. With `profileDir`, the
 * new broker's CPU profile (its start, the storm, its stop) is written there.
 */
export async function reconnectScenario(agentCount: number, profileDir?: string): Promise<ScenarioResult> {
  await buildDist();
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-reconnect-'));
  process.stderr.write(`  enrolling ${agentCount} simulated agents…\n`);
  const enrolled = await preEnroll(dataDir, agentCount);
  let broker = new BrokerProcess(dataDir, 0);
  const connections: BrokerConnection[] = [];
  try {
    const { port } = await broker.listening;
    /** When each agent was first welcomed by the new broker. */
    const backAt = new Map<string, number>();
    /** Until the new broker listens, a welcome can only come from the old one in its last moments. */
    let newBrokerUp = false;
    let allBack: () => void = () => {};
    const everyoneBack = new Promise<void>((resolve) => {
      allBack = resolve;
    });
    const firstOnline = new Set<string>();
    const everyoneOnline = new Promise<void>((resolve) => {
      for (const identity of enrolled.agents) {
        const connection = new BrokerConnection({
          dataDir: '/nonexistent',
          identity: {
            ...identity,
            brokerAddress: `localhost:${port}`,
            caCertificatePem: enrolled.caCertificatePem,
            privateKeyPem: enrolled.keys.privateKeyPem,
          },
          dispatcher: new Dispatcher(silentLogger),
          hello: () => ({ agentVersion: FLEETMESH_VERSION, protocolVersion: PROTOCOL_VERSION, actions: [], name: identity.name }),
          sample: () => BENCH_SAMPLE,
          log: silentLogger,
          backoffBaseMs: RECONNECT_BACKOFF.baseMs,
          backoffCapMs: RECONNECT_BACKOFF.capMs,
        });
        // Counted once per agent: one told to come back later may be welcomed, then moved, more than once.
        connection.on('connected', () => {
          if (!newBrokerUp) {
            firstOnline.add(identity.name);
            if (firstOnline.size === agentCount) resolve();
            return;
          }
          if (!backAt.has(identity.name)) backAt.set(identity.name, performance.now());
          if (backAt.size === agentCount) allBack();
        });
        connections.push(connection);
        connection.start();
      }
    });
    process.stderr.write(`  connecting ${agentCount} agents…\n`);
    await everyoneOnline;

    process.stderr.write('  restarting the broker (SIGTERM, then a new process on the same port)…\n');
    const stopStarted = performance.now();
    await broker.terminate();
    const downAt = performance.now();
    const dropsAtRestart = listenDrops();
    broker = new BrokerProcess(dataDir, port ?? 0, profileDir);
    const listening = await broker.listening;
    newBrokerUp = true;
    const agentsCpuAtListening = process.cpuUsage();
    const timeout = setTimeout(allBack, 180_000);
    await everyoneBack;
    clearTimeout(timeout);
    const agentsCpu = process.cpuUsage(agentsCpuAtListening);
    const after = await broker.stats();
    const dropsAtEnd = listenDrops();
    const loopActiveMs = after.loop_active_ms - listening.loop_active_ms;
    const loopIdleMs = after.loop_idle_ms - listening.loop_idle_ms;
    const backMs = [...backAt.values()].map((at) => at - listening.at).sort((a, b) => a - b);
    const stormMs = backMs.at(-1) ?? 0;
    const stormCpuMs = (after.cpu_us - listening.cpu_us) / 1000;
    return {
      scenario: `reconnect, ${agentCount} agents`,
      figures: {
        agents: agentCount,
        back: backAt.size,
        broker_stop_s: (downAt - stopStarted) / 1000,
        broker_down_s: (listening.at - downAt) / 1000,
        back_50pct_s: percentile(backMs, 50) / 1000,
        back_90pct_s: percentile(backMs, 90) / 1000,
        back_100pct_s: (backMs.at(-1) ?? Number.NaN) / 1000,
        // Measured from listening until the last agent was back (and the stats came).
        broker_cpu_s_during_storm: stormCpuMs / 1000,
        broker_cpu_pct_of_core_during_storm: (stormCpuMs / Math.max(1, stormMs)) * 100,
        broker_cpu_ms_per_agent_back: stormCpuMs / Math.max(1, backAt.size),
        // The share of the storm the broker's event loop was running (not waiting): near 1, the broker sets the pace.
        broker_event_loop_utilization_during_storm: loopActiveMs / Math.max(1, loopActiveMs + loopIdleMs),
        // Dials the kernel dropped from full listen queues from the restart to the end (every listener on this machine's
        // network namespace counts, so other work adds to it): each one waits for a SYN retransmit 1, 3, 7, 15, 31 s later.
        listen_overflows_from_restart: dropsAtEnd.overflows - dropsAtRestart.overflows,
        listen_drops_from_restart: dropsAtEnd.drops - dropsAtRestart.drops,
        broker_online_at_end: after.online ?? Number.NaN,
        // The simulated fleet shares one process: when this nears 100 %, it, not the broker, sets the pace.
        agents_process_cpu_pct_of_core_during_storm: ((agentsCpu.user + agentsCpu.system) / 1000 / Math.max(1, stormMs)) * 100,
        // Wall times stretch with whatever else the machine runs: the figures above are only comparable at a similar load.
        machine_load_1m_at_end: loadavg()[0] ?? Number.NaN,
      },
    };
  } finally {
    await Promise.all(connections.map((connection) => connection.stop()));
    await broker.terminate().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}
