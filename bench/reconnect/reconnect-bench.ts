import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildDist } from '../fleet/build-dist.ts';
import { FLEET_SHARE } from '../fleet/fleet-processes.ts';
import { preEnroll } from '../mesh/bench-fleet.ts';
import { percentile, type ScenarioResult } from '../report.ts';
import { listenDrops } from './listen-drops.ts';
import type { FleetEvent, FleetRequest, FleetSlice } from './reconnect-fleet.ts';

const RUN_TS = fileURLToPath(new URL('../../bin/run-ts.js', import.meta.url));
const BROKER = fileURLToPath(new URL('./reconnect-broker.ts', import.meta.url));
const FLEET = fileURLToPath(new URL('./reconnect-fleet.ts', import.meta.url));

type Stats = { id: number; cpu_us: number; loop_active_ms: number; loop_idle_ms: number; online?: number; port?: number };

/** One broker process: ready when it listens, answering stats over IPC. */
class BrokerProcess {
  readonly child: ChildProcess;
  /** Settles when the broker listens, with its port, its CPU time so far and the moment (performance.now()). */
  readonly listening: Promise<Stats & { at: number }>;
  private readonly waiting = new Map<number, (stats: Stats) => void>();
  private nextId = 1;

  /** With `profileDir`, the process writes its CPU profile to its `broker-reconnect-storm/` as it exits. */
  constructor(dataDir: string, port: number, sources: 'hosts' | 'nat', profileDir?: string) {
    // One profile per thread (the TypeScript loader has one of its own), named by Node: the broker's is the main thread's (`.0.` in its name).
    const execArgv = [...process.execArgv, ...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'broker-reconnect-storm')] : [])];
    this.child = fork(RUN_TS, [BROKER, dataDir, String(port), sources], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
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

/** One process of the simulated fleet (reconnect-fleet.ts), reporting each welcome with its wall-clock time. */
class FleetProcess {
  private readonly child: ChildProcess;
  private cpuWaiter: ((cpuUs: number) => void) | undefined;
  private stopWaiter: (() => void) | undefined;

  constructor(onConnected: (name: string, atMs: number) => void, slice: FleetSlice) {
    this.child = fork(RUN_TS, [FLEET], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: process.execArgv });
    this.child.on('message', (event: FleetEvent) => {
      if (event.type === 'connected') onConnected(event.name, event.atMs);
      else if (event.type === 'cpu') this.cpuWaiter?.(event.cpuUs);
      else this.stopWaiter?.();
    });
    this.send(slice);
  }

  private send(request: FleetRequest): void {
    this.child.send(request);
  }

  /** The process's CPU time so far (user and system, µs). */
  cpuUs(): Promise<number> {
    return new Promise((resolve) => {
      this.cpuWaiter = resolve;
      this.send({ type: 'cpu' });
    });
  }

  /** Stops every connection, then the process. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || !this.child.connected) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await new Promise<void>((resolve) => {
      this.stopWaiter = resolve;
      this.send({ type: 'stop' });
    });
    await exited;
  }
}

async function fleetsCpuUs(fleets: FleetProcess[]): Promise<number> {
  return (await Promise.all(fleets.map((fleet) => fleet.cpuUs()))).reduce((a, b) => a + b, 0);
}

interface ReconnectOptions {
  profileDir?: string;
  /** The processes the simulated fleet runs in. */
  processes?: number;
  /**
   * `hosts` (default): the fleet stands for hosts of their own addresses, though it dials from one, so the
   * broker lets that address hold as many pending connections as all may; `nat`: one site behind one NAT,
   * held to the per-source limit of a production broker.
   */
  sources?: 'hosts' | 'nat';
}

/**
 * N simulated agents (the real connection loop, backoff and all, each with its
 * own channel and TLS connection) connect to a broker process; the broker is
 * stopped with SIGTERM and a new one started on the same port and data dir.
 * Reports how long after the new broker listens 50, 90 and 100 % of the fleet
 * are back, and the new broker's CPU over that storm. With `profileDir`, the
 * new broker's CPU profile (its start, the storm, its stop) is written there.
 * The fleet runs in `processes` processes apart from the bench's (by
 * default one per 2,500 agents), so that dialling is not what sets the pace.
 */
export async function reconnectScenario(
  agentCount: number,
  { profileDir, processes = Math.max(1, Math.ceil(agentCount / FLEET_SHARE)), sources = 'hosts' }: ReconnectOptions = {},
): Promise<ScenarioResult> {
  await buildDist();
  const dataDir = mkdtempSync(join(tmpdir(), 'fm-bench-reconnect-'));
  process.stderr.write(`  enrolling ${agentCount} simulated agents…\n`);
  const enrolled = await preEnroll(dataDir, agentCount);
  let broker = new BrokerProcess(dataDir, 0, sources);
  const fleets: FleetProcess[] = [];
  try {
    const port = (await broker.listening).port ?? 0;
    /** When each agent was first welcomed by the new broker (wall clock, ms). */
    const backAt = new Map<string, number>();
    /** Until the new broker listens (wall clock, ms), a welcome can only come from the old one in its last moments. */
    let newBrokerSince = Number.POSITIVE_INFINITY;
    let allBack: () => void = () => {};
    const everyoneBack = new Promise<void>((resolve) => {
      allBack = resolve;
    });
    const firstOnline = new Set<string>();
    let allOnline: () => void = () => {};
    const everyoneOnline = new Promise<void>((resolve) => {
      allOnline = resolve;
    });
    // Counted once per agent: one told to come back later may be welcomed, then moved, more than once.
    const onConnected = (name: string, atMs: number) => {
      if (atMs < newBrokerSince) {
        firstOnline.add(name);
        if (firstOnline.size === agentCount) allOnline();
        return;
      }
      if (!backAt.has(name)) backAt.set(name, atMs);
      if (backAt.size === agentCount) allBack();
    };
    const file = join(dataDir, 'fleet.json');
    writeFileSync(file, JSON.stringify(enrolled));
    const share = Math.ceil(agentCount / processes);
    for (let start = 0; start < agentCount; start += share) {
      fleets.push(new FleetProcess(onConnected, { type: 'start', port, file, start, end: start + share }));
    }
    process.stderr.write(`  connecting ${agentCount} agents from ${fleets.length} process${fleets.length === 1 ? '' : 'es'}…\n`);
    await everyoneOnline;

    process.stderr.write('  restarting the broker (SIGTERM, then a new process on the same port)…\n');
    const stopStarted = performance.now();
    await broker.terminate();
    const downAt = performance.now();
    const dropsAtRestart = listenDrops();
    broker = new BrokerProcess(dataDir, port, sources, profileDir);
    const listening = await broker.listening;
    newBrokerSince = performance.timeOrigin + listening.at;
    const agentsCpuAtListening = await fleetsCpuUs(fleets);
    const timeout = setTimeout(allBack, 180_000);
    await everyoneBack;
    clearTimeout(timeout);
    const agentsCpuMs = ((await fleetsCpuUs(fleets)) - agentsCpuAtListening) / 1000;
    const after = await broker.stats();
    const dropsAtEnd = listenDrops();
    const loopActiveMs = after.loop_active_ms - listening.loop_active_ms;
    const loopIdleMs = after.loop_idle_ms - listening.loop_idle_ms;
    const backMs = [...backAt.values()].map((at) => at - newBrokerSince).sort((a, b) => a - b);
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
        // The simulated fleet's processes together: when this nears 100 % per process, they, not the broker, set the pace.
        agent_processes: fleets.length,
        agents_processes_cpu_pct_of_core_during_storm: (agentsCpuMs / Math.max(1, stormMs)) * 100,
        // Wall times stretch with whatever else the machine runs: the figures above are only comparable at a similar load.
        machine_load_1m_at_end: loadavg()[0] ?? Number.NaN,
      },
    };
  } finally {
    await Promise.all(fleets.map((fleet) => fleet.stop()));
    await broker.terminate().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}
