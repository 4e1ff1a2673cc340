import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { createIdentity } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { CliProcess } from '../../test/harness/cli-process.ts';
import { startPrivateEngine, TEST_IMAGE } from '../../test/harness/docker-engine.ts';
import { call, mcpClient } from '../../test/harness/mcp-client.ts';
import { processUsage } from '../proc-stats.ts';
import { percentile, type ScenarioResult } from '../report.ts';

const run = promisify(execFile);

async function timed<T>(work: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const value = await work();
  return [performance.now() - started, value];
}

/**
 * One agent (its own process) on a private engine with 20 running containers:
 * docker_stats cold and warm beside `docker stats --no-stream` (what homebutler
 * runs) in the same run, system_status on a warm agent, and the agent's idle
 * memory and CPU over a minute.
 */
export async function dockerScenario(options: { containers: number; idleSeconds: number }): Promise<ScenarioResult> {
  const engine = await startPrivateEngine();
  const root = mkdtempSync(join(tmpdir(), 'fm-bench-docker-'));
  const docker = new Docker({ socketPath: engine.dockerHost.replace('unix://', '') });
  let agent: CliProcess | undefined;
  let broker: Broker | undefined;
  try {
    process.stderr.write(`  starting ${options.containers} containers…\n`);
    await Promise.all(
      Array.from({ length: options.containers }, async (_, i) => {
        const container = await docker.createContainer({
          name: `bench-${i}`,
          Image: TEST_IMAGE,
          // A little work in some, idle in others, as on a real host.
          Cmd: i % 4 === 0 ? ['sh', '-c', 'while true; do echo tick; sleep 1; done'] : ['sleep', '3600'],
        });
        await container.start();
      }),
    );
    broker = await Broker.start(inProcessBrokerOptions(join(root, 'broker')), silentLogger);
    const joinToken = await (await createJoinToken(broker.store, { ttlMs: 60_000, uses: 1, labels: {} })).token;
    // The agent runs from the compiled build, as a deployed one does (no TypeScript loader in its memory).
    process.stderr.write('  building dist/…\n');
    await run(process.execPath, [
      fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url)),
      '-p',
      fileURLToPath(new URL('../../tsconfig.build.json', import.meta.url)),
    ]);
    agent = new CliProcess(
      [
        'agent',
        '--broker',
        `localhost:${broker.grpcPort}`,
        '--token',
        joinToken,
        '--ca-pin',
        broker.authority.pin,
        '--name',
        'bench-host',
        '--data-dir',
        join(root, 'agent'),
        '--docker-socket',
        engine.dockerHost,
        '--log-level',
        'warn',
      ],
      { entry: fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)) },
    );
    const current = broker;
    await new Promise<void>((resolve) => {
      const check = () => (current.registry.find('bench-host')?.state === 'online' ? resolve() : setTimeout(check, 100));
      check();
    });
    process.stderr.write(`  agent idle for ${options.idleSeconds} s…\n`);
    const pid = agent.child.pid as number;
    // Idle: connected and sampling, before any call opened stats streams.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const before = processUsage(pid);
    await new Promise((resolve) => setTimeout(resolve, options.idleSeconds * 1000));
    const after = processUsage(pid);

    const client = await mcpClient(broker, (await createIdentity(broker.store, { name: 'bench', level: 1 })).token);

    process.stderr.write('  docker_stats cold, warm, and docker stats --no-stream…\n');
    const [coldMs, cold] = await timed(() => call(client, 'docker_stats', { host: 'bench-host', timeout_ms: 30_000 }));
    const counted = (cold.structuredContent.containers as unknown[]).length;
    const warm: number[] = [];
    for (let i = 0; i < 20; i++) warm.push((await timed(() => call(client, 'docker_stats', { host: 'bench-host' })))[0]);
    const cli: number[] = [];
    for (let i = 0; i < 3; i++) {
      cli.push((await timed(() => run('docker', ['stats', '--no-stream'], { env: { ...process.env, DOCKER_HOST: engine.dockerHost } })))[0]);
    }

    process.stderr.write('  system_status on a warm agent…\n');
    const status: number[] = [];
    for (let i = 0; i < 50; i++) status.push((await timed(() => call(client, 'system_status', { host: 'bench-host' })))[0]);
    await client.close();

    const warmP50 = percentile(warm, 50);
    const cliP50 = percentile(cli, 50);
    return {
      scenario: `docker, ${options.containers} running containers, one agent`,
      figures: {
        containers_with_stats: counted,
        docker_stats_cold_ms: coldMs,
        docker_stats_warm_p50_ms: warmP50,
        docker_stats_warm_p99_ms: percentile(warm, 99),
        docker_cli_stats_no_stream_ms: cliP50,
        ratio_cli_over_warm: cliP50 / warmP50,
        ratio_cli_over_cold: cliP50 / coldMs,
        system_status_p50_ms: percentile(status, 50),
        system_status_p99_ms: percentile(status, 99),
        agent_rss_mib: after.rssBytes / 2 ** 20,
        agent_idle_cpu_percent: ((after.cpuMs - before.cpuMs) / (options.idleSeconds * 1000)) * 100,
        idle_seconds: options.idleSeconds,
      },
    };
  } finally {
    await agent?.stop();
    await broker?.stop();
    await engine.stop();
    rmSync(root, { recursive: true, force: true });
  }
}
