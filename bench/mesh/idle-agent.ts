import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { CliProcess } from '../../test/harness/cli-process.ts';
import { buildDist, DIST_AGENT, DIST_MAIN } from '../fleet/build-dist.ts';
import { processUsage } from '../proc-stats.ts';
import type { ScenarioResult } from '../report.ts';

/**
 * The V8 flags the agent's deployments give it (docker-compose.yml, the Helm chart): a 1 MiB young generation, lite
 * mode, and the bytecode of a function not run since the last full collection dropped (recompiled if it runs again).
 */
const AGENT_NODE_FLAGS = ['--max-semi-space-size=1', '--lite-mode', '--bytecode-old-age=1'];

/** A bare node process idling with the same flags, in the same run: the floor any node agent starts from. */
async function bareNodeUsage(node: string): Promise<ReturnType<typeof processUsage>> {
  const child = spawn(node, [...AGENT_NODE_FLAGS, '-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return processUsage(child.pid as number);
  } finally {
    child.kill();
  }
}

/** An agent process from the build, started as its deployments start it: the agent's bundle (or `entry`), with their flags. */
function agentProcess(node: string, args: string[], entry = DIST_AGENT): CliProcess {
  return new CliProcess(['agent', ...args], { entry, nodeFlags: AGENT_NODE_FLAGS, env: { NODE_ENV: 'production' }, node });
}

/** Stops the agent and waits until the broker has it offline, so the next one starts from a clean slate. */
async function stopAgent(broker: Broker, agent: CliProcess): Promise<void> {
  await agent.stop();
  while (broker.registry.find('idle-host')?.state === 'online') await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Waits for the agent online, lets it settle, and measures it over the idle window. */
async function idleUsage(broker: Broker, agent: CliProcess, idleSeconds: number) {
  while (broker.registry.find('idle-host')?.state !== 'online') {
    if (agent.exitCode !== undefined) throw new Error(`the agent exited: ${agent.output.slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // Connected and past its first samples before the window opens.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const pid = agent.child.pid as number;
  const before = processUsage(pid);
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  return { before, after: processUsage(pid) };
}

/**
 * One agent as its deployments run it (dist/agent.cjs, NODE_ENV=production), connected and
 * sampling, idle: its RSS and CPU over a while, first just enrolled, then
 * started again from the identity it keeps (as it runs after any restart of
 * its host or container), and beside it the same agent from the ES modules of
 * dist/cli/main.js (what `fleetmesh agent` runs). No Docker here, so the docker collector is off; the
 * docker scenario measures an idle agent beside a live engine.
 */
export async function idleAgentScenario(idleSeconds: number, node = process.execPath): Promise<ScenarioResult> {
  const root = mkdtempSync(join(tmpdir(), 'fm-bench-idle-'));
  await buildDist();
  const broker = await Broker.start(inProcessBrokerOptions(join(root, 'broker')), silentLogger);
  const token = (await createJoinToken(broker.store, { ttlMs: 60_000, uses: 1, labels: {} })).token;
  const common = ['--name', 'idle-host', '--data-dir', join(root, 'agent'), '--docker-socket', join(root, 'no-docker.sock'), '--log-level', 'warn'];
  let agent = agentProcess(node, ['--broker', `localhost:${broker.grpcPort}`, '--token', token, '--ca-pin', broker.authority.pin, ...common]);
  try {
    process.stderr.write(`  agent just enrolled, idle for ${idleSeconds} s…\n`);
    const enrolled = await idleUsage(broker, agent, idleSeconds);
    await stopAgent(broker, agent);
    process.stderr.write(`  agent started again from its identity, idle for ${idleSeconds} s…\n`);
    agent = agentProcess(node, common);
    const { before, after } = await idleUsage(broker, agent, idleSeconds);
    await stopAgent(broker, agent);
    process.stderr.write(`  the same agent from dist/cli/main.js (ES modules), idle for ${idleSeconds} s…\n`);
    agent = agentProcess(node, common, DIST_MAIN);
    const modules = await idleUsage(broker, agent, idleSeconds);
    const bare = await bareNodeUsage(node);
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    return {
      scenario: 'mesh, idle agent (dist/agent.cjs, as its deployments run it)',
      figures: {
        agent_rss_mib: after.rssBytes / 2 ** 20,
        agent_private_rss_mib: after.anonRssBytes / 2 ** 20,
        agent_rss_just_enrolled_mib: enrolled.after.rssBytes / 2 ** 20,
        agent_private_rss_just_enrolled_mib: enrolled.after.anonRssBytes / 2 ** 20,
        bare_node_rss_mib: bare.rssBytes / 2 ** 20,
        bare_node_private_rss_mib: bare.anonRssBytes / 2 ** 20,
        agent_rss_vs_bare_node: after.rssBytes / bare.rssBytes,
        agent_rss_es_modules_mib: modules.after.rssBytes / 2 ** 20,
        agent_private_rss_es_modules_mib: modules.after.anonRssBytes / 2 ** 20,
        agent_rss_just_enrolled_vs_bare_node: enrolled.after.rssBytes / bare.rssBytes,
        node: version,
        node_flags: AGENT_NODE_FLAGS.join(' '),
        agent_idle_cpu_percent: ((after.cpuMs - before.cpuMs) / (idleSeconds * 1000)) * 100,
        idle_seconds: idleSeconds,
        'target: idle agent': 'RSS ≤ 1.5× a bare node with the same flags, CPU ≤ 1 %',
      },
    };
  } finally {
    await agent.stop();
    await broker.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
