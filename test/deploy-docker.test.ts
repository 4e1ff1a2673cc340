import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BOOTSTRAP_FILES } from '../broker/bootstrap/bootstrap-files.ts';
import { buildFleetmeshImage, buildNodeBase, NODE_BASE_IMAGE, REPO_ROOT, removeImages, run } from './harness/fleetmesh-image.ts';
import { freePort } from './harness/free-port.ts';
import { call } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { waitFor } from './harness/wait.ts';

/**
 * A process of this machine (the test engine's host) listening on a loopback
 * port of its own, under a name nothing else has: what an agent in a container
 * can only know from the host's /proc.
 */
async function startHostListener(): Promise<{ name: string; pid: number; port: number; stop(): Promise<void> }> {
  const name = `fmprobe${process.pid}`;
  const child = spawn(
    process.execPath,
    [
      '-e',
      `process.title = ${JSON.stringify(name)}; const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  return {
    name,
    pid: child.pid as number,
    port: Number(line.toString().trim()),
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}

/** An MCP client on a published port, with a bearer token, as a user's client connects. */
async function connect(port: number, token: string): Promise<Client> {
  const client = new Client({ name: 'fleetmesh-deploy-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

/**
 * The README's Docker paths on the test engine: the image built from the
 * Dockerfile, bootstrap secrets, the repository's docker-compose.yml run by
 * `docker stack deploy` on the engine's one-node swarm and by `docker-compose
 * up` on its own; each time the agent enrolls by itself and answers through
 * the published MCP port with the bootstrap admin token, and removing the
 * deployment leaves nothing behind.
 */
describe('deploying with Docker', () => {
  const image = `fleetmesh-test/fleetmesh:${process.pid}`;
  const socket = inject('dockerHost').replace(/^unix:\/\//, '');
  const env = { ...process.env, DOCKER_HOST: inject('dockerHost') };
  const docker = (...args: string[]) => run('docker', args, { env });
  const temp = makeTempDir('fm-deploy-');
  const hostName = readFileSync('/etc/hostname', 'utf8').trim();

  /** Settings every deployment of docker-compose.yml takes from the environment. */
  async function composeEnv(secrets: string): Promise<{ env: NodeJS.ProcessEnv; mcpPort: number }> {
    const mcpPort = await freePort();
    return {
      mcpPort,
      env: {
        ...env,
        FLEETMESH_IMAGE: image,
        FLEETMESH_SECRETS: secrets,
        FLEETMESH_MCP_PORT: String(mcpPort),
        FLEETMESH_GRPC_PORT: String(await freePort()),
        FLEETMESH_DOCKER_SOCKET: socket,
        FLEETMESH_UID: '1000',
        FLEETMESH_GID: '1000',
      },
    };
  }

  /** Bootstraps through the image as its own user, into a directory that user owns (the README's way). */
  async function bootstrap(name: string): Promise<string> {
    const dir = join(temp.path, name);
    mkdirSync(dir);
    chownSync(dir, 1000, 1000);
    await docker('run', '--rm', '--user', '1000:1000', '--volume', `${dir}:/w`, '--workdir', '/w', image, 'bootstrap', '--out', 'fleetmesh-secrets');
    return join(dir, 'fleetmesh-secrets');
  }

  /** What is left on the engine under a label, by kind. */
  async function leftovers(label: string): Promise<{ services: string[]; containers: string[]; networks: string[]; secrets: string[]; volumes: string[] }> {
    const lines = (text: string) => text.split('\n').filter(Boolean);
    const filter = ['--filter', `label=${label}`];
    return {
      services: lines(await docker('service', 'ls', '-q', ...filter)),
      containers: lines(await docker('ps', '-aq', ...filter)),
      networks: lines(await docker('network', 'ls', '-q', ...filter)),
      secrets: lines(await docker('secret', 'ls', '-q', ...filter)),
      volumes: lines(await docker('volume', 'ls', '-q', ...filter)),
    };
  }

  const nothing = { services: [], containers: [], networks: [], secrets: [], volumes: [] };

  /** Waits for the broker's readiness, then for the agent to be online in list_agents. */
  async function expectAgentOnline(client: Client): Promise<void> {
    const online = await waitFor(
      async () => {
        const listed = await call(client, 'list_agents', { state: 'online' });
        return (listed.structuredContent.count as number) >= 1 ? listed.structuredContent : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500, what: 'the agent to enroll and connect' },
    );
    // The agent takes the host's name (its /etc/hostname), not its container's.
    expect(online).toMatchObject({ count: 1, agents: [{ name: hostName, state: 'online' }] });
  }

  /**
   * The agent in its container answers about the host: a process started here
   * and the loopback port it listens on, with its holder, are in its answers;
   * its own health port, in its container's network only, is not.
   */
  async function expectHostView(client: Client, agentLabel: string): Promise<void> {
    const container = (await docker('ps', '-q', '--filter', `label=${agentLabel}`)).trim();
    const agentPid = Number((await docker('inspect', '--format', '{{.State.Pid}}', container)).trim());
    const listener = await startHostListener();
    try {
      const listed = await call(client, 'processes', { host: hostName, limit: 0 });
      expect(listed.structuredContent).toMatchObject({ availability: 'available', failed_collectors: [] });
      const processList = listed.structuredContent.processes as { pid: number; name: string; user: string }[];
      expect(processList).toContainEqual(expect.objectContaining({ pid: listener.pid, name: listener.name }));
      // The container's own /proc would hold a handful of processes, none of them this test
      // runner, and the agent itself as pid 1 rather than under its pid on the host.
      expect(processList).toContainEqual(expect.objectContaining({ pid: process.pid }));
      expect(processList).toContainEqual(expect.objectContaining({ pid: agentPid, name: 'node' }));

      const ports = await call(client, 'open_ports', { host: hostName, port: listener.port });
      expect(ports.structuredContent).toMatchObject({
        availability: 'available',
        failed_collectors: [],
        ports: [{ protocol: 'tcp', address: '127.0.0.1', port: listener.port, pid: listener.pid, process: listener.name }],
      });
      // The agent's own health port listens in its container's network namespace only.
      const all = await call(client, 'open_ports', { host: hostName });
      expect(all.structuredContent.ports).toContainEqual(expect.objectContaining({ port: listener.port, pid: listener.pid }));
      expect(all.structuredContent.ports).not.toContainEqual(expect.objectContaining({ pid: agentPid }));

      // CPU, memory and load come from kernel figures no container has its own copy of.
      const status = await call(client, 'system_status', { host: hostName });
      const memTotalKib = Number(/^MemTotal:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]);
      expect((status.structuredContent.memory as { total_bytes: number }).total_bytes).toBe(memTotalKib * 1024);
    } finally {
      await listener.stop();
    }
  }

  async function waitReady(port: number, report: () => Promise<string>): Promise<void> {
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, { timeoutMs: 90_000, intervalMs: 500, what: 'the broker to be ready' });
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${await report()}`);
    }
  }

  beforeAll(async () => {
    await buildNodeBase(env);
    await buildFleetmeshImage(image, env);
  }, 240_000);

  afterAll(async () => {
    await removeImages([image, NODE_BASE_IMAGE], env);
    temp.remove();
  }, 60_000);

  describe('the image', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const network = `fmimage${process.pid}`;
    const brokerName = `fmimage-broker-${process.pid}`;
    const agentName = `fmimage-agent-${process.pid}`;
    const inspect = async (format: string, target = image) => (await docker('inspect', '--format', format, target)).trim();

    afterAll(async () => {
      await docker('rm', '--force', '--volumes', brokerName, agentName).catch(() => undefined);
      await docker('volume', 'rm', brokerName, agentName).catch(() => undefined);
      await docker('network', 'rm', network).catch(() => undefined);
    }, 60_000);

    it('carries its source, version and licence, runs as the unprivileged user node, and says its version', async () => {
      expect(JSON.parse(await inspect('{{json .Config.Labels}}'))).toMatchObject({
        'org.opencontainers.image.source': 'https://github.com/fleetmesh/fleetmesh',
        'org.opencontainers.image.version': pkg.version,
        'org.opencontainers.image.licenses': 'Apache-2.0',
        'org.opencontainers.image.title': 'fleetmesh',
      });
      expect(await inspect('{{.Config.User}}')).toBe('node');
      expect((await docker('run', '--rm', '--entrypoint', 'id', image, '-u')).trim()).toBe('1000');
      expect((await docker('run', '--rm', image, '--version')).trim()).toBe(pkg.version);
      expect(JSON.parse(await inspect('{{json .Config.Healthcheck.Test}}'))).toEqual(['CMD', 'node', '/opt/fleetmesh/bin/healthcheck.js']);
    });

    it('holds a CycloneDX SBOM of exactly its npm dependencies, made while it was built', async () => {
      const sbom = JSON.parse(await docker('run', '--rm', '--entrypoint', 'cat', image, '/opt/fleetmesh/sbom.cdx.json'));
      expect(sbom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.6', metadata: { component: { name: 'fleetmesh', version: pkg.version } } });
      expect(sbom.metadata.tools.components.map((tool: { name: string }) => tool.name)).toContain('cyclonedx-npm');
      // Every component, nested ones included, by its package URL.
      const purls = new Set<string>();
      const walk = (components: { purl?: string; components?: unknown[] }[] = []) => {
        for (const component of components) {
          if (component.purl) purls.add(decodeURIComponent(component.purl.split('?')[0] as string));
          walk(component.components as typeof components);
        }
      };
      walk(sbom.components);
      // Exactly the production tree npm installed, each package at its installed version; no build tool.
      const production = (await run('npm', ['ls', '--omit=dev', '--all', '--parseable', '--long'], { cwd: REPO_ROOT }))
        .split('\n')
        .slice(1)
        .filter(Boolean)
        .map((line) => `pkg:npm/${line.split(':')[1]}`);
      expect([...purls].sort()).toEqual([...new Set(production)].sort());
      for (const name of Object.keys(pkg.dependencies))
        expect(
          [...purls].some((purl) => purl.startsWith(`pkg:npm/${name}@`)),
          name,
        ).toBe(true);
      for (const tool of ['typescript', 'tsx', 'vite', 'vitest', '@biomejs/biome', '@cyclonedx/cyclonedx-npm']) {
        expect(
          [...purls].filter((purl) => purl.startsWith(`pkg:npm/${tool}@`)),
          tool,
        ).toEqual([]);
      }
    });

    it("runs a broker and an agent as the README's install section does, each reported healthy by the image's own health check", async () => {
      // README "The container image", with names of this test's own and any free port for the published MCP port.
      const mcpPort = await freePort();
      await docker('network', 'create', network);
      await docker(
        'run',
        '--detach',
        '--name',
        brokerName,
        '--network',
        network,
        '-p',
        `127.0.0.1:${mcpPort}:7400`,
        '-v',
        `${brokerName}:/var/lib/fleetmesh`,
        image,
        'broker',
        '--mcp-listen',
        '0.0.0.0:7400',
        '--grpc-listen',
        '0.0.0.0:7443',
        '--advertise-names',
        brokerName,
        // The Host header a client sends names the published port, not 7400.
        '--mcp-allowed-hosts',
        `127.0.0.1:${mcpPort}`,
      );
      const created = await waitFor(
        () => docker('exec', brokerName, 'fleetmesh', 'token', 'create', '--broker-address', `${brokerName}:7443`, '--output', 'json'),
        { timeoutMs: 60_000, intervalMs: 500, what: 'the broker in its container to make a join token' },
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await run('sh', ['-c', `docker logs --tail 30 ${brokerName} 2>&1`], { env }).catch(String)}`);
      });
      const { token, ca_pin: caPin } = JSON.parse(created) as { token: string; ca_pin: string };
      await docker(
        'run',
        '--detach',
        '--name',
        agentName,
        '--network',
        network,
        '-v',
        `${agentName}:/var/lib/fleetmesh`,
        image,
        'agent',
        '--broker',
        `${brokerName}:7443`,
        '--token',
        token,
        '--ca-pin',
        caPin,
        '--name',
        'image-agent',
        '--health-listen',
        '127.0.0.1:7401',
      );
      for (const container of [brokerName, agentName]) {
        await waitFor(async () => (await inspect('{{.State.Health.Status}}', container)) === 'healthy', {
          timeoutMs: 90_000,
          intervalMs: 1000,
          what: `${container} to be healthy`,
        }).catch(async (error: Error) => {
          throw new Error(`${error.message}\n${await run('sh', ['-c', `docker logs --tail 30 ${container} 2>&1`], { env }).catch(String)}`);
        });
      }
      expect(await docker('exec', brokerName, 'fleetmesh', 'agents')).toMatch(/^image-agent\s+online/m);
      // The agent runs as node too: nothing here gives it root.
      expect(await inspect('{{.Config.User}}', agentName)).toBe('node');
      // The entrypoint hands `agent` to the agent's bundle, in the container's first process: with the agent's V8
      // flags where node can replace its process (the image's Node 24), else required as it is.
      const first = (await docker('exec', agentName, 'cat', '/proc/1/cmdline')).split('\0').filter(Boolean).slice(1);
      if (typeof (process as { execve?: unknown }).execve === 'function') {
        expect(first.slice(0, 5)).toEqual(['--max-semi-space-size=1', '--lite-mode', '--bytecode-old-age=1', '/opt/fleetmesh/dist/agent.cjs', 'agent']);
      } else {
        expect(first.slice(0, 2)).toEqual(['/opt/fleetmesh/bin/fleetmesh.cjs', 'agent']);
      }

      const identity = JSON.parse(await docker('exec', brokerName, 'fleetmesh', 'identity', 'create', 'me', '--level', '1', '--output', 'json')) as {
        token: string;
      };
      const client = await connect(mcpPort, identity.token);
      try {
        const listed = await call(client, 'list_agents', {});
        expect(listed.structuredContent).toMatchObject({ count: 1, agents: [{ name: 'image-agent', state: 'online' }] });
      } finally {
        await client.close();
      }
    }, 180_000);
  });

  describe('docker stack deploy on a swarm', () => {
    const stack = `fmstack${process.pid}`;
    const label = `com.docker.stack.namespace=${stack}`;
    let secrets = '';
    let mcpPort = 0;
    let client: Client | undefined;

    /** The services' tasks and logs, for a failure message. */
    async function report(): Promise<string> {
      const parts: string[] = [];
      for (const service of ['broker', 'agent']) {
        parts.push(await docker('service', 'ps', '--no-trunc', `${stack}_${service}`).catch(String));
        // Service logs carry the containers' stderr on their own stderr: merge them.
        parts.push(await run('sh', ['-c', `docker service logs --tail 30 ${stack}_${service} 2>&1`], { env }).catch(String));
      }
      return parts.join('\n');
    }

    /** `docker stack rm`, then the volumes it keeps, once their containers are gone. */
    async function removeStack(): Promise<void> {
      await docker('stack', 'rm', stack).catch(() => undefined);
      await waitFor(
        async () => {
          const left = await leftovers(label);
          return left.services.length + left.containers.length + left.networks.length + left.secrets.length === 0;
        },
        { timeoutMs: 60_000, intervalMs: 500, what: `stack ${stack} to be removed` },
      );
      for (const volume of (await leftovers(label)).volumes) await docker('volume', 'rm', volume);
    }

    beforeAll(async () => {
      secrets = await bootstrap('stack');
      const settings = await composeEnv(secrets);
      mcpPort = settings.mcpPort;
      await run('docker', ['stack', 'deploy', '--resolve-image', 'never', '-c', join(REPO_ROOT, 'docker-compose.yml'), stack], { env: settings.env });
      await waitReady(mcpPort, report);
    }, 120_000);

    afterAll(async () => {
      await client?.close();
      await removeStack().catch(() => undefined);
    }, 90_000);

    it('runs the agent as a global service that enrolls with the bootstrap token, reachable with the bootstrap admin token', async () => {
      expect((await docker('service', 'inspect', `${stack}_agent`, '--format', '{{json .Spec.Mode}}')).trim()).toBe('{"Global":{}}');
      client = await connect(mcpPort, readFileSync(join(secrets, BOOTSTRAP_FILES.adminToken), 'utf8').trim());
      await expectAgentOnline(client).catch(async (error: Error) => {
        throw new Error(`${error.message}\n${await report()}`);
      });
      const status = await call(client, 'system_status', { host: hostName });
      expect(status.isError).toBeFalsy();
      expect(status.structuredContent).toMatchObject({ host: hostName, availability: 'available' });
      // The agent reaches the engine through the mounted socket: it counts the stack's own containers.
      expect(status.structuredContent.containers_running).toBeGreaterThanOrEqual(2);
      // Admin commands run inside the broker's container, on its data dir.
      const broker = (await docker('ps', '-q', '--filter', `label=com.docker.swarm.service.name=${stack}_broker`)).trim();
      expect(await docker('exec', broker, 'fleetmesh', 'agents')).toMatch(new RegExp(`^${hostName}\\s+online`, 'm'));
    }, 150_000);

    it("answers processes and open_ports about the host, not the agent's container", async () => {
      if (!client) throw new Error('the previous test did not connect');
      await expectHostView(client, `com.docker.swarm.service.name=${stack}_agent`);
    }, 60_000);

    it('reports both services healthy, and leaves nothing behind once removed', async () => {
      await waitFor(
        async () => {
          const states = (await docker('ps', '--filter', `label=${label}`, '--format', '{{.Status}}')).split('\n').filter(Boolean);
          return states.length === 2 && states.every((state) => state.includes('(healthy)'));
        },
        { timeoutMs: 90_000, intervalMs: 1000, what: 'both containers to be healthy' },
      );
      await client?.close();
      client = undefined;
      await removeStack();
      expect(await leftovers(label)).toEqual(nothing);
    }, 180_000);
  });

  describe('docker-compose up on one host', () => {
    const project = `fmcompose${process.pid}`;
    const label = `com.docker.compose.project=${project}`;
    let compose: (...args: string[]) => Promise<string>;
    let secrets = '';
    let mcpPort = 0;

    beforeAll(async () => {
      secrets = await bootstrap('compose');
      const settings = await composeEnv(secrets);
      mcpPort = settings.mcpPort;
      compose = (...args) =>
        run('docker-compose', ['--project-name', project, '--file', join(REPO_ROOT, 'docker-compose.yml'), ...args], { env: settings.env });
      await compose('up', '--detach', '--no-build');
      await waitReady(mcpPort, () => compose('logs', '--tail', '30').catch(String));
    }, 120_000);

    afterAll(async () => {
      await compose?.('down', '--volumes').catch(() => undefined);
    }, 90_000);

    it('enrolls the agent and answers with the bootstrap admin token, then leaves nothing behind', async () => {
      const client = await connect(mcpPort, readFileSync(join(secrets, BOOTSTRAP_FILES.adminToken), 'utf8').trim());
      try {
        await expectAgentOnline(client).catch(async (error: Error) => {
          throw new Error(`${error.message}\n${await compose('logs', '--tail', '30').catch(String)}`);
        });
        const status = await call(client, 'system_status', { host: hostName });
        expect(status.structuredContent).toMatchObject({ host: hostName, availability: 'available' });
        await expectHostView(client, `com.docker.compose.service=agent`);
      } finally {
        await client.close();
      }
      await compose('down', '--volumes');
      expect(await leftovers(label)).toEqual(nothing);
    }, 150_000);
  });
});
