import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { CliProcess } from '../../test/harness/cli-process.ts';
import { buildDist, DIST_MAIN } from '../fleet/build-dist.ts';
import { processUsage } from '../proc-stats.ts';
import type { ScenarioResult } from '../report.ts';

/** The V8 flags the agent's deployments give it (docker-compose.yml, the Helm chart): a 1 MiB young generation, lite mode. */
const AGENT_NODE_FLAGS = ['--max-semi-space-size=1', '--lite-mode'];

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

/**
 * One agent as the image runs it (dist/, NODE_ENV=production), connected and
 * sampling, idle: its RSS and CPU over a while. No Docker here, so the docker
 * collector is off; the docker scenario measures an idle agent beside a live engine.
 */
export async function idleAgentScenario(idleSeconds: number, node = process.execPath): Promise<ScenarioResult> {
  const root = mkdtempSync(join(tmpdir(), 'fm-bench-idle-'));
  await buildDist();
  const broker = await Broker.start(inProcessBrokerOptions(join(root, 'broker')), silentLogger);
  const token = (await createJoinToken(broker.store, { ttlMs: 60_000, uses: 1, labels: {} })).token;
  const agent = new CliProcess(
    [
      'agent',
      ...['--broker', `localhost:${broker.grpcPort}`, '--token', token, '--ca-pin', broker.authority.pin, '--name', 'idle-host'],
      ...['--data-dir', join(root, 'agent'), '--docker-socket', join(root, 'no-docker.sock'), '--log-level', 'warn'],
    ],
    { entry: DIST_MAIN, nodeFlags: AGENT_NODE_FLAGS, env: { NODE_ENV: 'production' }, node },
  );
  try {
    while (broker.registry.find('idle-host')?.state !== 'online') {
      if (agent.exitCode !== undefined) throw new Error(`the agent exited: ${agent.output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    process.stderr.write(`  agent idle for ${idleSeconds} s…\n`);
    // Connected and past its first samples before the window opens.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const pid = agent.child.pid as number;
    const before = processUsage(pid);
    await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
    const after = processUsage(pid);
    const bare = await bareNodeUsage(node);
    const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
    return {
      scenario: 'mesh, idle agent (dist/, as the image runs it)',
      figures: {
        agent_rss_mib: after.rssBytes / 2 ** 20,
        agent_private_rss_mib: after.anonRssBytes / 2 ** 20,
        bare_node_rss_mib: bare.rssBytes / 2 ** 20,
        bare_node_private_rss_mib: bare.anonRssBytes / 2 ** 20,
        node: version,
        node_flags: AGENT_NODE_FLAGS.join(' '),
        agent_idle_cpu_percent: ((after.cpuMs - before.cpuMs) / (idleSeconds * 1000)) * 100,
        idle_seconds: idleSeconds,
        'target: idle agent': 'RSS ≤ 64 MiB, CPU ≤ 1 %',
      },
    };
  } finally {
    await agent.stop();
    await broker.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
