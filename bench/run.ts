/**
 * `npm run bench`: every benchmark scenario, or those named with --only.
 *   npm run bench -- --only mesh --agents 500,2000 --rounds 50 --calls 200 --idle-seconds 60 [--simulators N] [--profile] [--agent-node PATH]
 *   npm run bench -- --only idle --idle-seconds 60 [--agent-node PATH]   (the idle agent alone, as mesh ends)
 *   npm run bench -- --only docker --containers 20 --idle-seconds 60
 *   npm run bench -- --only tokens --hosts 100
 *   npm run bench -- --only cli --runs 10
 *   npm run bench -- --only reconnect --reconnect-agents 2000 [--reconnect-processes N] [--reconnect-behind-nat] [--profile]
 *   npm run bench -- --only web --web-hosts 2000
 *   npm run bench -- --only cluster --cluster-agents 3000 --rounds 20 [--cluster-layouts single,cluster]
 *   npm run bench -- --only ssh --ssh-hosts 50 --rounds 50 --ssh-rounds 3   (root)
 */
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cliScenario } from './cli/cli-bench.ts';
import { clusterScenario, LAYOUTS, type Layout } from './cluster/cluster-bench.ts';
import { dockerScenario } from './docker/docker-bench.ts';
import { idleAgentScenario } from './mesh/idle-agent.ts';
import { mcpOverheadScenario } from './mesh/mcp-overhead.ts';
import { meshScenario } from './mesh/mesh-bench.ts';
import { reconnectScenario } from './reconnect/reconnect-bench.ts';
import { report, type ScenarioResult } from './report.ts';
import { sshScenario } from './ssh/ssh-bench.ts';
import { tokensScenario } from './tokens/tokens-bench.ts';
import { webScenario } from './web/web-bench.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    agents: { type: 'string', default: '500,2000' },
    rounds: { type: 'string', default: '50' },
    containers: { type: 'string', default: '20' },
    'idle-seconds': { type: 'string', default: '60' },
    /** The node binary the idle agent runs on (the image ships Node 24; the bench itself may run on 20). */
    'agent-node': { type: 'string', default: process.execPath },
    hosts: { type: 'string', default: '100' },
    runs: { type: 'string', default: '10' },
    'reconnect-agents': { type: 'string', default: '2000' },
    // The processes the reconnect bench's simulated fleet is spread over; default one per 2,500 agents.
    'reconnect-processes': { type: 'string' },
    // The reconnect bench's fleet as one site behind one NAT (the broker's per-source limit applies), not hosts of their own addresses.
    'reconnect-behind-nat': { type: 'boolean', default: false },
    'cluster-agents': { type: 'string', default: '3000' },
    /** The cluster bench's layouts: single (one broker on SQLite), cluster (three on PostgreSQL and NATS), or both. */
    'cluster-layouts': { type: 'string', default: LAYOUTS.join(',') },
    calls: { type: 'string', default: '200' },
    'ssh-hosts': { type: 'string', default: '50' },
    'ssh-rounds': { type: 'string', default: '3' },
    'web-hosts': { type: 'string', default: '2000' },
    /** Processes the mesh bench's simulated agents and bare streams are spread over (default: one per 2,500 agents). */
    simulators: { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
});

/** Where --profile writes CPU profiles and heap snapshots (git-ignored with the results). */
function profileDir(): string {
  const dir = fileURLToPath(new URL('./results/profiles/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The machine's load as a scenario ends: wall times stretch with whatever else runs, ratios less so. */
function withLoad(result: ScenarioResult): ScenarioResult {
  return { ...result, figures: { ...result.figures, machine_load_1m_at_end: result.figures.machine_load_1m_at_end ?? loadavg()[0] ?? Number.NaN } };
}

const selected = new Set((values.only ?? 'mesh,docker,tokens,cli,reconnect,ssh,web').split(','));
const results: ScenarioResult[] = [];
if (selected.has('mesh')) {
  for (const count of (values.agents ?? '').split(',').filter(Boolean).map(Number)) {
    process.stderr.write(`mesh: ${count} agents\n`);
    const simulators = values.simulators ? Number(values.simulators) : undefined;
    results.push(withLoad(await meshScenario(count, Number(values.rounds), values.profile ? profileDir() : undefined, simulators)));
  }
  process.stderr.write('mesh: MCP overhead on a local agent\n');
  results.push(withLoad(await mcpOverheadScenario(Number(values.calls), values.profile ? profileDir() : undefined)));
}
if (selected.has('mesh') || selected.has('idle')) {
  process.stderr.write('mesh: idle agent\n');
  results.push(withLoad(await idleAgentScenario(Number(values['idle-seconds']), values['agent-node'])));
}
if (selected.has('docker')) {
  process.stderr.write('docker\n');
  results.push(withLoad(await dockerScenario({ containers: Number(values.containers), idleSeconds: Number(values['idle-seconds']) })));
}
if (selected.has('tokens')) {
  process.stderr.write(`tokens: ${values.hosts} agents\n`);
  results.push(withLoad(await tokensScenario(Number(values.hosts))));
}
if (selected.has('ssh')) {
  process.stderr.write(`ssh: ${values['ssh-hosts']} hosts\n`);
  results.push(withLoad(await sshScenario({ hosts: Number(values['ssh-hosts']), rounds: Number(values.rounds), sshRounds: Number(values['ssh-rounds']) })));
}
if (selected.has('cli')) {
  process.stderr.write('cli\n');
  results.push(withLoad(await cliScenario({ runs: Number(values.runs) })));
}
if (selected.has('reconnect')) {
  process.stderr.write(`reconnect: ${values['reconnect-agents']} agents\n`);
  const processes = values['reconnect-processes'] ? Number(values['reconnect-processes']) : undefined;
  const sources = values['reconnect-behind-nat'] ? 'nat' : 'hosts';
  results.push(
    withLoad(await reconnectScenario(Number(values['reconnect-agents']), { profileDir: values.profile ? profileDir() : undefined, processes, sources })),
  );
}
if (selected.has('web')) {
  process.stderr.write(`web: ${values['web-hosts']} hosts\n`);
  results.push(withLoad(await webScenario(Number(values['web-hosts']))));
}
if (selected.has('cluster')) {
  process.stderr.write(`cluster: ${values['cluster-agents']} agents\n`);
  const layouts = values['cluster-layouts'].split(',').filter(Boolean);
  const unknown = layouts.filter((layout) => !(LAYOUTS as readonly string[]).includes(layout));
  if (unknown.length) throw new Error(`--cluster-layouts: no layout ${unknown.join(', ')} (there are ${LAYOUTS.join(', ')})`);
  results.push(withLoad(await clusterScenario(Number(values['cluster-agents']), Number(values.rounds), layouts as Layout[])));
}
report(`npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(), results);
process.exit(0);
