/**
 * `npm run soak -- --minutes 10`: N simulated agents (in processes of their
 * own, one per 2,500) on a broker in its own process and M MCP clients calling
 * a mix of tools, for a while. Samples the broker's RSS and heap (after a GC),
 * event-loop delay p99, open handles, late heartbeats, dropped agents, calls
 * and errors over time; writes them as a CSV and a PNG chart under
 * bench/results/, and exits 1 when there were errors, late heartbeats or
 * dropped agents, or RSS grew past the target after
 * warm-up (CI runs a 2-minute version).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BrokerProcess } from '../fleet/broker-process.ts';
import { startFleet } from '../fleet/fleet-processes.ts';
import { preEnroll } from '../mesh/bench-fleet.ts';
import { processUsage } from '../proc-stats.ts';
import { percentile } from '../report.ts';
import { pngChart } from './png-chart.ts';

const SOAK_BROKER = fileURLToPath(new URL('./soak-broker.ts', import.meta.url));
/** RSS may grow this much from the end of warm-up to the end of the run. */
const RSS_GROWTH_TARGET_PERCENT = 10;

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    agents: { type: 'string', default: '2000' },
    clients: { type: 'string', default: '50' },
    'sample-seconds': { type: 'string', default: '10' },
    /** Each client waits this long between its calls (a model reads its answer before the next one). */
    'think-ms': { type: 'string', default: '500' },
  },
});
const minutes = Number(values.minutes);
const agentCount = Number(values.agents);
const clientCount = Number(values.clients);
const sampleMs = Number(values['sample-seconds']) * 1000;
const thinkMs = Number(values['think-ms']);
const durationMs = minutes * 60_000;
/** Growth is measured from here: caches, pools and the JIT have settled. */
const warmUpMs = Math.max(30_000, durationMs * 0.2);

/** What bench/soak/soak-broker.ts answers to 'sample'. */
interface BrokerSample {
  rss_bytes: number;
  heap_used_bytes: number;
  loop_delay_p99_ms: number;
  open_handles: number;
  online: number;
  /** Times an online agent turned stale (its heartbeats stopped coming in time), since the broker started. */
  late_heartbeats: number;
  /** Times an agent's stream ended (it left, or the broker closed it), since the broker started. */
  dropped: number;
}

interface Row {
  elapsed_s: number;
  rss_mib: number;
  heap_used_mib: number;
  loop_delay_p99_ms: number;
  open_handles: number;
  online_agents: number;
  /** Online agents turned stale since the clients started: heartbeats the broker did not get in time. */
  late_heartbeats: number;
  /** Agents whose stream ended since the clients started, stale first or not. */
  dropped_agents: number;
  calls: number;
  errors: number;
  call_p50_ms: number;
  call_p99_ms: number;
}

/** The mix a model's session makes: mostly one host at a time, now and then the whole fleet. */
function nextCall(i: number, hostName: (n: number) => string): [string, Record<string, unknown>] {
  const host = hostName(Math.floor(Math.random() * agentCount));
  const roll = i % 20;
  if (roll < 6) return ['system_status', { host }];
  if (roll < 10) return ['agent_info', { host }];
  if (roll < 13) return ['docker_list', { host }];
  if (roll < 15) return ['describe', { type: 'host', id: host }];
  if (roll < 16) return ['find', { type: 'container', query: host, limit: 20 }];
  if (roll < 17) return ['list_agents', { state: 'online' }];
  if (roll < 18) return ['get_fleet_status', {}];
  if (roll < 19) return ['system_status', { selector: `zone=zone-${i % 3}`, timeout_ms: 30_000 }];
  return ['docker_list', { hosts: [host, hostName((i * 7) % agentCount)] }];
}

/** A call counts as an error when it throws, is a tool error, or any host in its answer failed. */
function failed(result: CallToolResult): string | undefined {
  if (result.isError)
    return result.content
      .map((c) => (c.type === 'text' ? c.text : ''))
      .join(' ')
      .slice(0, 200);
  const structured = result.structuredContent as { errors?: unknown[]; error_counts?: Record<string, number> } | undefined;
  const errors = structured?.errors;
  if (Array.isArray(errors) && errors.length > 0) return JSON.stringify(errors[0]).slice(0, 200);
  // A paged answer with many failures carries its own hosts' and counts the whole call's.
  if (structured?.error_counts && Object.keys(structured.error_counts).length > 0)
    return `failures of hosts on other pages: ${JSON.stringify(structured.error_counts)}`;
  return undefined;
}

const dataDir = mkdtempSync(join(tmpdir(), 'fm-soak-'));
const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));
mkdirSync(resultsDir, { recursive: true });
const stamp = new Date().toISOString().replaceAll(':', '-');
let broker: BrokerProcess | undefined;
let fleets: BrokerProcess[] = [];
const clients: Client[] = [];
let stopping = false;
const latencies: number[] = [];
/** Each tool's call latencies after warm-up: which calls are slow, and whether they slow down over the run. */
const byTool = new Map<string, { first: number[]; second: number[] }>();
/** The end of warm-up, and the halfway mark of the run after it (performance.now()). */
const marks = { warm: 0, half: 0 };
let calls = 0;
let errors = 0;
const firstErrors: string[] = [];

function noteError(what: string): void {
  errors += 1;
  if (firstErrors.length < 10) firstErrors.push(what);
}

async function clientLoop(client: Client, index: number, hostName: (n: number) => string): Promise<void> {
  let i = index;
  while (!stopping) {
    const [name, args] = nextCall(i, hostName);
    i += 1;
    const started = performance.now();
    try {
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as CallToolResult;
      const failure = failed(result);
      if (failure) noteError(`${name}: ${failure}`);
    } catch (error) {
      // The SDK's HTTP errors carry the status in `code` (JSON-RPC errors a negative code), their message only the body.
      const code = (error as { code?: unknown }).code;
      const status = typeof code === 'number' && code >= 100 && code < 600 ? `HTTP ${code}: ` : '';
      if (!stopping) noteError(`${name}: ${status}${(error as Error).message}`);
    }
    calls += 1;
    const now = performance.now();
    latencies.push(now - started);
    if (started >= marks.warm) {
      const label = args.selector ? `${name} (zone)` : Array.isArray(args.hosts) ? `${name} (${args.hosts.length} hosts)` : name;
      const tool = byTool.get(label) ?? { first: [], second: [] };
      byTool.set(label, tool);
      (started < marks.half ? tool.first : tool.second).push(now - started);
    }
    await new Promise((resolve) => setTimeout(resolve, thinkMs));
  }
}

async function cleanUp(): Promise<void> {
  stopping = true;
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(fleets.map((fleet) => fleet.stop().catch(() => {})));
  await broker?.stop().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`soak: ${signal}, stopping…\n`);
    void cleanUp().finally(() => process.exit(130));
  });
}

let exitCode = 1;
try {
  process.stderr.write(`soak: enrolling ${agentCount} simulated agents…\n`);
  const enrolled = await preEnroll(dataDir, agentCount);
  broker = new BrokerProcess(SOAK_BROKER, dataDir);
  const ready = (await broker.ready) as { port: number; mcp_url: string };
  process.stderr.write(`soak: connecting ${agentCount} agents over mTLS, from processes of their own (one per 2,500)…\n`);
  const fleetFile = join(dataDir, 'soak-fleet.json');
  writeFileSync(fleetFile, JSON.stringify(enrolled));
  fleets = await startFleet(fleetFile, agentCount, [`localhost:${ready.port}`]);
  const connectDeadline = Date.now() + 600_000;
  for (;;) {
    const { online } = await broker.request<BrokerSample>('sample');
    if (online === agentCount) break;
    if (Date.now() > connectDeadline) throw new Error(`${online} of ${agentCount} simulated agents connected within 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const names = enrolled.agents.map((a) => a.name);
  const hostName = (n: number) => names[n] ?? '';
  process.stderr.write(`soak: ${clientCount} MCP clients for ${minutes} min (warm-up ${warmUpMs / 1000} s)…\n`);
  for (let c = 0; c < clientCount; c++) {
    const { token } = await broker.request<{ token: string }>('identity', { name: `soak-${c}` });
    const client = new Client({ name: `fleetmesh-soak-${c}`, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(ready.mcp_url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
  }
  const started = performance.now();
  marks.warm = started + warmUpMs;
  marks.half = marks.warm + (durationMs - warmUpMs) / 2;
  const driverCpu = process.cpuUsage();
  const fleetCpuBefore = fleets.map((fleet) => processUsage(fleet.pid).cpuMs);
  const before = await broker.request<BrokerSample>('sample');
  const loops = clients.map((client, c) => clientLoop(client, c, hostName));

  const rows: Row[] = [];
  while (performance.now() - started < durationMs) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(sampleMs, durationMs - (performance.now() - started))));
    const sample = await broker.request<BrokerSample>('sample');
    const window = latencies.splice(0);
    const row: Row = {
      elapsed_s: Math.round((performance.now() - started) / 1000),
      rss_mib: sample.rss_bytes / 2 ** 20,
      heap_used_mib: sample.heap_used_bytes / 2 ** 20,
      loop_delay_p99_ms: sample.loop_delay_p99_ms,
      open_handles: sample.open_handles,
      online_agents: sample.online,
      late_heartbeats: sample.late_heartbeats - before.late_heartbeats,
      dropped_agents: sample.dropped - before.dropped,
      calls,
      errors,
      call_p50_ms: percentile(window, 50),
      call_p99_ms: percentile(window, 99),
    };
    rows.push(row);
    process.stderr.write(
      `  ${row.elapsed_s} s: rss ${row.rss_mib.toFixed(0)} MiB, heap ${row.heap_used_mib.toFixed(0)} MiB, loop p99 ${row.loop_delay_p99_ms.toFixed(0)} ms, handles ${row.open_handles}, online ${row.online_agents}, late heartbeats ${row.late_heartbeats}, dropped ${row.dropped_agents}, calls ${calls}, errors ${errors}\n`,
    );
  }
  stopping = true;
  const driverCpuUs = process.cpuUsage(driverCpu);
  const driverCpuPercent = ((driverCpuUs.user + driverCpuUs.system) / 1000 / (performance.now() - started)) * 100;
  const fleetCpuMs = fleets.reduce((sum, fleet, i) => sum + processUsage(fleet.pid).cpuMs - (fleetCpuBefore[i] ?? 0), 0);
  const fleetCpuPercent = (fleetCpuMs / (performance.now() - started)) * 100;
  await Promise.all(loops);

  const columns = Object.keys(rows[0] ?? {}) as (keyof Row)[];
  const csv = [columns.join(','), ...rows.map((r) => columns.map((k) => (Number.isInteger(r[k]) ? r[k] : r[k].toFixed(3))).join(','))].join('\n');
  writeFileSync(join(resultsDir, `soak-${stamp}.csv`), `${csv}\n`);
  const elapsed = rows.map((r) => r.elapsed_s);
  writeFileSync(
    join(resultsDir, `soak-${stamp}.png`),
    pngChart(elapsed, [
      { title: 'broker RSS MiB', values: rows.map((r) => r.rss_mib), color: [200, 60, 40] },
      { title: 'broker heap used MiB', values: rows.map((r) => r.heap_used_mib), color: [40, 110, 200] },
      { title: 'event loop delay p99 ms', values: rows.map((r) => r.loop_delay_p99_ms), color: [120, 60, 170] },
      { title: 'open handles', values: rows.map((r) => r.open_handles), color: [40, 150, 80] },
      { title: 'call p99 ms', values: rows.map((r) => r.call_p99_ms), color: [200, 140, 20] },
      { title: 'errors', values: rows.map((r) => r.errors), color: [220, 0, 0] },
    ]),
  );

  const warm = rows.find((r) => r.elapsed_s * 1000 >= warmUpMs) ?? rows[0];
  const last = rows.at(-1);
  if (!warm || !last || warm === last) throw new Error('the run was too short to measure growth after warm-up');
  const afterWarmUp = rows.filter((r) => r.elapsed_s >= warm.elapsed_s);
  // Growth compares floors, the lowest sample of the first and of the last quarter after warm-up: what memory
  // settles back to between bursts. A leak raises the floor; a burst of fleet-wide calls in flight when one
  // sample is taken moves that sample alone, by 15 % either way at 2,000 agents.
  const span = Math.max(2, Math.floor(afterWarmUp.length / 4));
  type Floored = 'rss_mib' | 'heap_used_mib' | 'open_handles';
  const floorOf = (window: Row[], key: Floored) => Math.min(...window.map((r) => r[key]));
  const growth = (key: Floored) => {
    const [early, late] = [floorOf(afterWarmUp.slice(0, span), key), floorOf(afterWarmUp.slice(-span), key)];
    return { early, late, percent: ((late - early) / early) * 100 };
  };
  const rss = growth('rss_mib');
  const heap = growth('heap_used_mib');
  // Handles too: each call in flight holds some, so one sample counts the burst it was taken in.
  const handles = growth('open_handles');
  const lines = [
    `Command: \`npm run soak -- ${process.argv.slice(2).join(' ')}\``.replace(' -- `', '`'),
    `Machine: ${process.platform} ${process.arch}, Node ${process.version}`,
    '',
    `### soak, ${agentCount} agents, ${clientCount} MCP clients, ${minutes} min`,
    '',
    '| figure | value |',
    '| --- | --- |',
    `| calls | ${calls} |`,
    `| errors | ${errors} |`,
    `| broker RSS, lowest sample of the first → last quarter after warm-up (${warm.elapsed_s} s), MiB | ${rss.early.toFixed(1)} → ${rss.late.toFixed(1)} |`,
    `| RSS growth after warm-up | ${rss.percent.toFixed(1)} % (target < ${RSS_GROWTH_TARGET_PERCENT} %) |`,
    `| heap growth after warm-up, the same way | ${heap.percent.toFixed(1)} % (${heap.early.toFixed(1)} → ${heap.late.toFixed(1)} MiB) |`,
    `| broker RSS, sample at warm-up → last sample, MiB | ${warm.rss_mib.toFixed(1)} → ${last.rss_mib.toFixed(1)} |`,
    `| event loop delay p99, worst sample | ${Math.max(...rows.map((r) => r.loop_delay_p99_ms)).toFixed(1)} ms |`,
    `| event loop delay p99, median of the samples after warm-up | ${percentile(
      afterWarmUp.map((r) => r.loop_delay_p99_ms),
      50,
    ).toFixed(1)} ms |`,
    `| open handles, lowest sample of the first → last quarter after warm-up (last sample) | ${handles.early} → ${handles.late} (${last.open_handles}) |`,
    `| heartbeats late (an online agent turned stale) | ${last.late_heartbeats} |`,
    `| agents dropped (an agent's stream ended) | ${last.dropped_agents} |`,
    `| the MCP clients' process CPU, share of one core | ${driverCpuPercent.toFixed(0)} % |`,
    `| the simulated agents' processes (${fleets.length}), CPU share of one core | ${fleetCpuPercent.toFixed(0)} % |`,
    `| CSV and chart | bench/results/soak-${stamp}.csv, .png |`,
    '',
    'Call latency after warm-up, by tool, in the first and the second half of the rest of the run:',
    '',
    '| tool | calls | p50 ms, first → second half | p99 ms, first → second half |',
    '| --- | --- | --- | --- |',
    ...[...byTool.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(
        ([tool, { first, second }]) =>
          `| ${tool} | ${first.length + second.length} | ${percentile(first, 50).toFixed(0)} → ${percentile(second, 50).toFixed(0)} | ${percentile(first, 99).toFixed(0)} → ${percentile(second, 99).toFixed(0)} |`,
      ),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (firstErrors.length) process.stdout.write(`First errors:\n${firstErrors.map((e) => `- ${e}`).join('\n')}\n`);
  const passed = errors === 0 && last.late_heartbeats === 0 && last.dropped_agents === 0 && rss.percent < RSS_GROWTH_TARGET_PERCENT;
  process.stdout.write(
    passed
      ? 'soak: passed\n'
      : `soak: FAILED (${errors} errors, ${last.late_heartbeats} late heartbeats, ${last.dropped_agents} agents dropped, RSS growth ${rss.percent.toFixed(1)} %)\n`,
  );
  exitCode = passed ? 0 : 1;
} catch (error) {
  process.stderr.write(`soak: ${(error as Error).stack ?? error}\n`);
} finally {
  await cleanUp();
}
process.exit(exitCode);
