import { existsSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliProcess, runFleetmesh } from './harness/cli-process.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { waitFor } from './harness/wait.ts';

describe('the fleetmesh command line', () => {
  let temp: ReturnType<typeof makeTempDir>;
  const processes: CliProcess[] = [];
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    temp.remove();
  });

  it('gives every command a --help', async () => {
    for (const command of [['up'], ['broker'], ['agent'], ['bootstrap'], ['token', 'create'], ['token', 'list'], ['token', 'revoke'], ['agents'], ['revoke']]) {
      const { code, stdout } = await runFleetmesh([...command, '--help']);
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`^Usage: fleetmesh ${command.join(' ')}`));
    }
  });

  it('stops on a bad flag with one line naming it', async () => {
    const { code, stdout, stderr } = await runFleetmesh(['broker', '--grpc-lisen', '1.2.3.4:5']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/fleetmesh broker: unknown option '--grpc-lisen'/);
  });

  it('stops on a bad value, naming the flag or the environment variable', async () => {
    const badFlag = await runFleetmesh(['broker', '--heartbeat-interval', '5', '--data-dir', temp.path]);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/--heartbeat-interval "5" has no unit/);
    const badEnv = await runFleetmesh(['broker', '--data-dir', temp.path], { env: { FLEETMESH_GRPC_LISTEN: 'nowhere' } });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr.trim().split('\n')).toHaveLength(1);
    expect(badEnv.stderr).toMatch(/--grpc-listen "nowhere" is not host:port/);
  });

  it('stops on an unknown config key, and on an unreadable config file', async () => {
    const config = join(temp.path, 'broker.yaml');
    writeFileSync(config, 'grpc-listen: 127.0.0.1:0\nheartbeat_intervl: 5s\n');
    const unknown = await runFleetmesh(['broker', '--config', config, '--data-dir', temp.path]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/unknown key "heartbeat_intervl"/);
    const missing = await runFleetmesh(['agent', '--config', join(temp.path, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/config file .*nope\.yaml does not exist/);
  });

  it('asks for enrollment flags when an agent has no identity yet', async () => {
    const { code, stderr } = await runFleetmesh(['agent', '--data-dir', join(temp.path, 'agent')]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/not enrolled yet .*missing --broker, --token, --ca-pin/);
  });

  it('runs the README walk-through: up with labels, a call by selector, a second agent from the printed command as printed, agents, revoke', async () => {
    const up = new CliProcess(
      [
        'up',
        '--grpc-listen',
        '127.0.0.1:0',
        '--mcp-listen',
        '127.0.0.1:0',
        '--web-listen',
        '127.0.0.1:0',
        '--advertise-names',
        'localhost,127.0.0.1',
        '--name',
        'local',
        '--labels',
        'role=web',
        '--heartbeat-interval',
        '500ms',
      ],
      { cwd: temp.path, env: { FLEETMESH_LABLES: 'role=typo' } },
    );
    processes.push(up);
    await up.waitForOutput(/fleetmesh is up/);
    expect(up.stdout).toMatch(/local agent\s+local \(online\)/);
    expect(up.stderr).toMatch(/warning: FLEETMESH_LABLES \(did you mean FLEETMESH_LABELS\?\) is not a setting of this command, ignored/);
    const mcpUrl = /MCP endpoint\s+(\S+)/.exec(up.stdout)?.[1] as string;
    const grpcPort = /agents connect to\s+\S+:(\d+)/.exec(up.stdout)?.[1] as string;
    // The console it prints answers, and wants a sign-in.
    const consoleUrl = /web console\s+(http:\/\/127\.0\.0\.1:\d+\/)/.exec(up.stdout)?.[1] as string;
    expect((await fetch(`${consoleUrl}api/session`)).status).toBe(401);

    // The README's second example: the admin token npm start kept, agents by label.
    const byLabel = await runFleetmesh(['call', 'agent_info', '--selector', 'role=web', '--url', mcpUrl, '--output', 'json'], { cwd: temp.path });
    expect(byLabel.code).toBe(0);
    expect(JSON.parse(byLabel.stdout)).toMatchObject({ targeted: 1, hosts: [{ host: 'local', labels: { role: 'web' } }] });
    // A selector no agent matches names the labels there are.
    const none = await runFleetmesh(['call', 'agent_info', '--selector', 'role=db', '--url', mcpUrl], { cwd: temp.path });
    expect(none.code).not.toBe(0);
    expect(none.stdout + none.stderr).toMatch(/Labels in the fleet: role=web/);

    const listed = await runFleetmesh(['agents'], { cwd: temp.path });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+STATE\s+VERSION\s+LABELS\s+LAST SEEN\s+CERT EXPIRES/);
    expect(listed.stdout).toMatch(/local\s+online/);

    // Dialled by address, on the broker's own machine, exactly as printed.
    const token = await runFleetmesh(['token', 'create', '--labels', 'role=db', '--broker-address', `127.0.0.1:${grpcPort}`], { cwd: temp.path });
    expect(token.code).toBe(0);
    // Printed outside the checkout, where neither fleetmesh nor npx fleetmesh would find this CLI: node and the bin's absolute path.
    const printed = /^\s+(node (\S+) (agent --broker \S+ --token fm1\.\S+ --ca-pin sha256:[0-9a-f]{64}(?: --name \S+)? --data-dir \S+))$/m.exec(token.stdout);
    expect(printed, token.stdout).not.toBeNull();
    expect(isAbsolute(printed?.[2] as string) && existsSync(printed?.[2] as string)).toBe(true);
    const args = (printed?.[3] ?? '').split(' ');
    const second = new CliProcess(args, { cwd: temp.path });
    processes.push(second);
    await waitFor(async () => /\S+\s+online\s+\S+\s+role=db/.test((await runFleetmesh(['agents'], { cwd: temp.path })).stdout), {
      what: 'the second agent online',
    });
    expect(second.stderr).not.toMatch(/DEP0123|Warning/);
    const secondName = /^(\S+)\s+online\s+\S+\s+role=db/m.exec((await runFleetmesh(['agents'], { cwd: temp.path })).stdout)?.[1] as string;

    const revoked = await runFleetmesh(['revoke', secondName], { cwd: temp.path });
    expect(revoked.code).toBe(0);
    expect(await second.exited).toBe(3);
    const after = await runFleetmesh(['agents'], { cwd: temp.path });
    expect(after.stdout).not.toMatch(/role=db/);
    expect(after.stdout).toMatch(/local\s+online/);
  }, 180_000);

  it('refuses, in one line, a join token for a data dir that holds an agent of another broker', async () => {
    const up = new CliProcess(['up', '--grpc-listen', '127.0.0.1:0', '--mcp-listen', '127.0.0.1:0', '--web-listen', 'off', '--name', 'local'], {
      cwd: temp.path,
    });
    processes.push(up);
    await up.waitForOutput(/fleetmesh is up/);
    const grpcPort = /agents connect to\s+\S+:(\d+)/.exec(up.stdout)?.[1] as string;
    const otherPin = `sha256:${'ab'.repeat(32)}`;
    const { code, stderr } = await runFleetmesh(
      ['agent', '--broker', `localhost:${grpcPort}`, '--token', 'fm1.aaaa.bbbb', '--ca-pin', otherPin, '--data-dir', join(temp.path, '.fleetmesh', 'agent')],
      { cwd: temp.path },
    );
    expect(code).not.toBe(0);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/already holds agent "local" of another broker .*--data-dir of its own/);
  });
});
