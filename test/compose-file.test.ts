import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { AGENT_COMMAND } from '../agent/agent-options.ts';
import { BROKER_COMMAND } from '../broker/broker-options.ts';
import type { CommandSpec } from '../shared/options/command-line.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { flagVariables } from './harness/flag-variables.ts';
import { REPO_ROOT, run } from './harness/fleetmesh-image.ts';
import { makeTempDir } from './harness/temp-dir.ts';

/** Debian's docker-compose v1, which .ci/run installs. */
const COMPOSE = '/usr/bin/docker-compose';

interface ComposeService {
  command: string[];
  environment: Record<string, string>;
  volumes: string[];
  secrets: { source: string; uid?: string; mode?: number }[];
  healthcheck?: { test: string[] };
  deploy?: { mode?: string; replicas?: number; endpoint_mode?: string };
  ports?: { target: number; published: number | string; mode?: string }[];
  user?: string;
  cap_add?: string[];
  cap_drop?: string[];
}

describe('docker-compose.yml', () => {
  const temp = makeTempDir('fm-compose-');
  const secrets = join(temp.path, 'secrets');
  let config: { services: Record<string, ComposeService>; secrets: Record<string, { file: string }> };

  beforeAll(async () => {
    expect(existsSync(COMPOSE), `${COMPOSE} is missing: apt-get install -y docker-compose (.ci/run does)`).toBe(true);
    expect((await runFleetmesh(['bootstrap', '--out', secrets])).code).toBe(0);
    const output = await run(COMPOSE, ['--file', join(REPO_ROOT, 'docker-compose.yml'), '--project-directory', REPO_ROOT, 'config'], {
      env: { ...process.env, FLEETMESH_SECRETS: secrets, FLEETMESH_MCP_PORT: '17400', FLEETMESH_BROKER_HOST: 'broker.example.com' },
    });
    config = parse(output);
  });

  /** The configuration docker-compose.yml and docker-compose.host.yml make together, with these settings. */
  async function withHostFile(settings: NodeJS.ProcessEnv): Promise<typeof config> {
    const files = ['docker-compose.yml', 'docker-compose.host.yml'].flatMap((file) => ['--file', join(REPO_ROOT, file)]);
    const output = await run(COMPOSE, [...files, '--project-directory', REPO_ROOT, 'config'], {
      env: { ...process.env, FLEETMESH_SECRETS: secrets, FLEETMESH_MCP_PORT: '17400', FLEETMESH_BROKER_HOST: 'broker.example.com', ...settings },
    });
    return parse(output);
  }
  afterAll(() => temp.remove());

  it('passes docker-compose config, with a secret for every file bootstrap writes', () => {
    expect(Object.keys(config.services).sort()).toEqual(['agent', 'broker']);
    for (const { file } of Object.values(config.secrets)) {
      expect(file.startsWith(`${secrets}/`)).toBe(true);
      expect(existsSync(file), file).toBe(true);
    }
  });

  it('runs the broker as one replica and the agent as a global service, both with healthchecks', () => {
    const { broker, agent } = config.services as { broker: ComposeService; agent: ComposeService };
    expect(broker.command).toEqual(['broker']);
    expect(broker.deploy).toMatchObject({ replicas: 1, endpoint_mode: 'dnsrr' });
    expect(broker.ports?.map((p) => [p.target, Number(p.published)])).toEqual([
      [7400, 17400],
      [7443, 7443],
    ]);
    expect(broker.environment).toMatchObject({
      FLEETMESH_MCP_LISTEN: '0.0.0.0:7400',
      FLEETMESH_ADVERTISE_NAMES: 'broker.example.com,broker',
      FLEETMESH_MCP_PUBLIC_URL: 'http://broker.example.com:17400/mcp',
    });
    expect(broker.environment.FLEETMESH_MCP_ALLOWED_HOSTS?.split(',')).toContain('broker.example.com:17400');
    expect(agent.command).toEqual(['agent']);
    expect(agent.deploy?.mode).toBe('global');
    expect(agent.environment.FLEETMESH_BROKER).toBe('broker:7443');
    expect(agent.volumes).toEqual(
      expect.arrayContaining([
        '/var/run/docker.sock:/var/run/docker.sock:rw',
        '/proc:/host/proc:ro',
        '/sys:/host/sys:ro',
        '/etc/hostname:/host/etc/hostname:ro',
      ]),
    );
    // The agent reads the host's processes and ports from its /proc, their holders with two capabilities only.
    expect(agent.environment.FLEETMESH_HOST_PROC).toBe('/host/proc');
    expect(agent).toMatchObject({ user: '0:0', cap_drop: ['ALL'], cap_add: ['SYS_PTRACE', 'DAC_OVERRIDE'] });
    for (const service of [broker, agent]) expect(service.healthcheck?.test.join(' ')).toMatch(/\/readyz/);
    // The secrets a service mounts are readable by the user it runs as.
    for (const service of [broker, agent]) {
      const uid = service.user?.split(':')[0];
      for (const secret of service.secrets) expect(secret.uid).toBe(uid);
    }
  });

  it('sets only environment variables the broker and agent commands read', () => {
    const { broker, agent } = config.services as { broker: ComposeService; agent: ComposeService };
    const brokerVariables = flagVariables(BROKER_COMMAND as unknown as CommandSpec);
    const agentVariables = flagVariables(AGENT_COMMAND as unknown as CommandSpec);
    expect(Object.keys(broker.environment).filter((name) => !brokerVariables.has(name))).toEqual([]);
    expect(Object.keys(agent.environment).filter((name) => !agentVariables.has(name))).toEqual([]);
    // Every file the services read comes from a mounted secret or volume.
    for (const service of [broker, agent]) {
      for (const [name, value] of Object.entries(service.environment)) {
        if (!name.endsWith('_FILE')) continue;
        const mounted = service.secrets.some((s) => value === `/run/secrets/${s.source}`) || service.volumes.some((v) => v.split(':')[1] === value);
        expect(mounted, `${name}=${value}`).toBe(true);
      }
    }
  });

  it("gives the agent what the host tools read with docker-compose.host.yml: the host's / read-only at /host, each flag pointing into it", async () => {
    const host = await withHostFile({ FLEETMESH_JOURNAL_DIR: '/host/var/log/journal', FLEETMESH_LOG_PATHS: '/host/var/log/*.log,/host/var/log/nginx/*.log' });
    const agent = host.services.agent as ComposeService;
    expect(agent.volumes).toEqual(expect.arrayContaining(['/:/host:ro', ...(config.services.agent?.volumes ?? [])]));
    expect(agent.environment).toMatchObject({
      ...config.services.agent?.environment,
      FLEETMESH_HOST_ROOT: '/host',
      FLEETMESH_JOURNAL_DIR: '/host/var/log/journal',
      FLEETMESH_SYSTEM_BUS: '/host/run/dbus/system_bus_socket',
      FLEETMESH_LOG_PATHS: '/host/var/log/*.log,/host/var/log/nginx/*.log',
      DOCKER_CONFIG: '/host/root/.docker',
    });
    // Every path it names is under the read-only mount of the host's root.
    const paths = ['FLEETMESH_HOST_ROOT', 'FLEETMESH_JOURNAL_DIR', 'FLEETMESH_SYSTEM_BUS', 'DOCKER_CONFIG'].map((name) => agent.environment[name] as string);
    for (const path of [...paths, ...(agent.environment.FLEETMESH_LOG_PATHS as string).split(',')])
      expect(path === '/host' || path.startsWith('/host/'), path).toBe(true);
    const agentVariables = flagVariables(AGENT_COMMAND as unknown as CommandSpec);
    expect(Object.keys(agent.environment).filter((name) => !agentVariables.has(name))).toEqual([]);
    // The broker is as docker-compose.yml makes it (docker-compose lists merged secrets in its own order).
    const bySource = (service: ComposeService | undefined) => ({
      ...service,
      secrets: [...(service?.secrets ?? [])].sort((a, b) => a.source.localeCompare(b.source)),
    });
    expect(bySource(host.services.broker)).toEqual(bySource(config.services.broker));
    // Unset, the journal directory is named by no one (the agent stops at one that is not there), and no log file is allowed.
    const plain = (await withHostFile({})).services.agent as ComposeService;
    expect(plain.environment).toMatchObject({ FLEETMESH_JOURNAL_DIR: '', FLEETMESH_LOG_PATHS: '', FLEETMESH_FILE_PATHS: '' });
  });
});
