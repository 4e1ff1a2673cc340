import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createIdentity } from '../../broker/auth/identities.ts';
import { Broker } from '../../broker/broker.ts';
import { inProcessBrokerOptions } from '../../broker/broker-options.ts';
import { createJoinToken } from '../../broker/enrollment/join-tokens.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { call, mcpClient } from '../../test/harness/mcp-client.ts';
import { buildDist, DIST_MAIN } from '../fleet/build-dist.ts';
import { percentile, type ScenarioResult } from '../report.ts';
import { BROKER_NAME, TestHosts } from './test-hosts.ts';

const run = promisify(execFile);

/** What system_status reports, printed the way a script over SSH gets it: one command per figure. */
const SSH_STATUS_COMMAND = 'hostname; uname -sr; cat /proc/uptime; cat /proc/loadavg; nproc; grep -E "^(MemTotal|MemAvailable):" /proc/meminfo; df -P -B1 /';

function hostName(index: number): string {
  return `host-${String(index).padStart(2, '0')}`;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/**
 * N test hosts (network namespaces, each with its own sshd and a fleetmesh
 * agent from the build), then in the same run: system_status on all of them
 * through fleetmesh, against N parallel `ssh host` commands printing the same
 * figures (one connection and one process per host per call). Needs root.
 */
export async function sshScenario(options: { hosts: number; rounds: number; sshRounds: number }): Promise<ScenarioResult> {
  const missing = ['/usr/sbin/sshd', '/usr/bin/ssh', '/usr/bin/ssh-keygen'].filter((path) => !existsSync(path));
  if (missing.length) {
    throw new Error(`the ssh scenario needs OpenSSH (missing: ${missing.join(', ')}): apt-get install -y openssh-server openssh-client`);
  }
  const root = mkdtempSync(join(tmpdir(), 'fm-bench-ssh-'));
  const hosts = new TestHosts(root, await TestHosts.freeSubnet());
  let broker: Broker | undefined;
  const stopOnSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`ssh: ${signal}, cleaning up…\n`);
    void hosts.destroy().finally(() => process.exit(130));
  };
  // A crash anywhere (the broker's own shutdown included) still takes the namespaces and their processes down.
  const stopOnCrash = (error: Error) => {
    process.stderr.write(`ssh: ${error.stack ?? error.message}\ncleaning up…\n`);
    void hosts.destroy().finally(() => process.exit(1));
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  process.once('uncaughtException', stopOnCrash);
  try {
    await buildDist();
    process.stderr.write(`  ${options.hosts} network namespaces with sshd…\n`);
    await hosts.create(options.hosts);
    const { clientKey } = await hosts.startSshd();

    broker = await Broker.start(inProcessBrokerOptions(join(root, 'broker'), { grpcListen: '0.0.0.0:0', advertiseNames: [BROKER_NAME] }), silentLogger);
    const joinToken = (await createJoinToken(broker.store, { ttlMs: 600_000, uses: options.hosts, labels: {} })).token;
    process.stderr.write(`  ${options.hosts} agents (dist/), one per namespace…\n`);
    const { grpcPort, authority } = broker;
    const agents = hosts.hosts.map((host) =>
      hosts.spawnIn(
        host,
        process.execPath,
        [
          DIST_MAIN,
          'agent',
          '--broker',
          `${BROKER_NAME}:${grpcPort}`,
          '--token',
          joinToken,
          '--ca-pin',
          authority.pin,
          '--name',
          hostName(host.index),
          '--data-dir',
          join(root, `agent-${host.index}`),
          '--docker-socket',
          join(root, 'no-docker.sock'),
          '--log-level',
          'warn',
        ],
        join(root, `agent-${host.index}.log`),
      ),
    );
    const current = broker;
    const until = Date.now() + 600_000;
    while (current.registry.list().filter((h) => h.state === 'online').length < options.hosts) {
      const exited = agents.findIndex((agent) => agent.exitCode !== null);
      if (exited >= 0) {
        const log = readFileSync(join(root, `agent-${exited}.log`), { encoding: 'utf8', flag: 'a+' }).slice(-1500);
        throw new Error(`the agent of ${hostName(exited)} exited: ${log}`);
      }
      if (Date.now() > until) {
        const missing = hosts.hosts.filter((h) => current.registry.find(hostName(h.index))?.state !== 'online');
        const log = missing[0] ? readFileSync(join(root, `agent-${missing[0].index}.log`), { encoding: 'utf8', flag: 'a+' }).slice(-1500) : '';
        throw new Error(`${missing.length} agents did not connect within 10 minutes; ${missing[0] ? hostName(missing[0].index) : ''} said: ${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    const client = await mcpClient(broker, (await createIdentity(broker.store, { name: 'bench-ssh', level: 1 })).token);
    process.stderr.write(`  system_status on ${options.hosts} hosts through fleetmesh, ${options.rounds} rounds…\n`);
    let failedHosts = 0;
    const fleetmesh: number[] = [];
    // The first round warms the agents' collectors, as any long-running agent is.
    for (let i = 0; i <= options.rounds; i++) {
      let responded = 0;
      const ms = await timed(async () => {
        const result = await call(client, 'system_status', { timeout_ms: 30_000 });
        responded = Number(result.structuredContent.responded ?? 0);
      });
      if (i === 0) continue;
      fleetmesh.push(ms);
      failedHosts += options.hosts - responded;
    }
    await client.close();

    process.stderr.write(`  ${options.hosts} parallel ssh commands, ${options.sshRounds} rounds…\n`);
    const sshRounds: number[] = [];
    const sshCommands: number[] = [];
    let sshFailures = 0;
    for (let i = 0; i < options.sshRounds; i++) {
      sshRounds.push(
        await timed(() =>
          Promise.all(
            hosts.hosts.map(async (host) => {
              const started = performance.now();
              try {
                const { stdout } = await run('ssh', [
                  '-i',
                  clientKey,
                  '-o',
                  'StrictHostKeyChecking=no',
                  '-o',
                  'UserKnownHostsFile=/dev/null',
                  '-o',
                  'BatchMode=yes',
                  '-o',
                  'LogLevel=ERROR',
                  `root@${host.address}`,
                  SSH_STATUS_COMMAND,
                ]);
                if (!stdout.includes('MemTotal')) sshFailures += 1;
              } catch {
                sshFailures += 1;
              }
              sshCommands.push(performance.now() - started);
            }),
          ),
        ),
      );
    }

    const fleetmeshP50 = percentile(fleetmesh, 50);
    const sshP50 = percentile(sshRounds, 50);
    return {
      scenario: `ssh side by side, system_status on ${options.hosts} hosts`,
      figures: {
        hosts: options.hosts,
        fleetmesh_round_p50_ms: fleetmeshP50,
        fleetmesh_round_p99_ms: percentile(fleetmesh, 99),
        fleetmesh_rounds: options.rounds,
        fleetmesh_failed_hosts: failedHosts,
        ssh_round_p50_ms: sshP50,
        ssh_round_p99_ms: percentile(sshRounds, 99),
        ssh_one_command_p50_ms: percentile(sshCommands, 50),
        ssh_one_command_p99_ms: percentile(sshCommands, 99),
        ssh_rounds: options.sshRounds,
        ssh_failed_commands: sshFailures,
        ratio_ssh_over_fleetmesh_p50: sshP50 / fleetmeshP50,
        target: 'fleetmesh ≥ 100× faster median',
      },
    };
  } finally {
    // Agents first: a broker that stops under connected agents still hears their streams end.
    await hosts.destroy();
    await broker?.stop();
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
    process.off('uncaughtException', stopOnCrash);
    rmSync(root, { recursive: true, force: true });
  }
}
