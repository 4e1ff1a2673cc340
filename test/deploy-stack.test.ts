import { readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BOOTSTRAP_FILES } from '../broker/bootstrap/bootstrap-files.ts';
import { runFleetmesh } from './harness/cli-process.ts';
import { buildFleetmeshImage, buildNodeBase, NODE_BASE_IMAGE, REPO_ROOT, removeImages, run } from './harness/fleetmesh-image.ts';
import { call } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { waitFor } from './harness/wait.ts';

/** A TCP port free on this machine now (the stack publishes on it in host mode). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The README's swarm path on the test engine's one-node swarm: bootstrap
 * secrets, the image built from the Dockerfile, `docker stack deploy` of the
 * repository's docker-compose.yml, a global agent that enrolls by itself, and
 * an MCP client on the published port with the bootstrap admin token.
 */
describe('docker-compose.yml deployed as a Docker stack', () => {
  const stack = `fmstack${process.pid}`;
  const image = `fleetmesh-test/fleetmesh:${process.pid}`;
  const socket = inject('dockerHost').replace(/^unix:\/\//, '');
  const env = { ...process.env, DOCKER_HOST: inject('dockerHost') };
  const docker = (...args: string[]) => run('docker', args, { env });
  const temp = makeTempDir('fm-stack-');
  const secrets = join(temp.path, 'secrets');
  let mcpPort = 0;
  let client: Client | undefined;

  /** What the stack still owns on the engine, by kind. */
  async function leftovers(): Promise<{ services: string[]; containers: string[]; networks: string[]; secrets: string[]; volumes: string[] }> {
    const label = `label=com.docker.stack.namespace=${stack}`;
    const lines = (text: string) => text.split('\n').filter(Boolean);
    return {
      services: lines(await docker('service', 'ls', '-q', '--filter', label)),
      containers: lines(await docker('ps', '-aq', '--filter', label)),
      networks: lines(await docker('network', 'ls', '-q', '--filter', label)),
      secrets: lines(await docker('secret', 'ls', '-q', '--filter', label)),
      volumes: lines(await docker('volume', 'ls', '-q', '--filter', label)),
    };
  }

  /** Waits as waitFor does; on a timeout the error carries the services' tasks and logs. */
  async function waitForStack<T>(probe: () => Promise<T>, what: string): Promise<NonNullable<T>> {
    try {
      return await waitFor(probe, { timeoutMs: 90_000, intervalMs: 500, what });
    } catch (error) {
      const report: string[] = [];
      for (const service of ['broker', 'agent']) {
        report.push(await docker('service', 'ps', '--no-trunc', `${stack}_${service}`).catch(String));
        // Service logs carry the containers' stderr on their own stderr: merge them.
        report.push(await run('sh', ['-c', `docker service logs --tail 30 ${stack}_${service} 2>&1`], { env }).catch(String));
      }
      throw new Error(`${(error as Error).message}\n${report.join('\n')}`);
    }
  }

  /** `docker stack rm`, then the volumes it keeps, once their containers are gone. */
  async function removeStack(): Promise<void> {
    await docker('stack', 'rm', stack).catch(() => undefined);
    await waitFor(
      async () => {
        const left = await leftovers();
        return left.services.length + left.containers.length + left.networks.length + left.secrets.length === 0;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: `stack ${stack} to be removed` },
    );
    for (const volume of (await leftovers()).volumes) await docker('volume', 'rm', volume);
  }

  beforeAll(async () => {
    await buildNodeBase(env);
    await buildFleetmeshImage(image, env);
    const bootstrapped = await runFleetmesh(['bootstrap', '--out', secrets, '--format', 'compose']);
    expect(bootstrapped.code).toBe(0);
    mcpPort = await freePort();
    await run('docker', ['stack', 'deploy', '--resolve-image', 'never', '-c', join(REPO_ROOT, 'docker-compose.yml'), stack], {
      env: {
        ...env,
        FLEETMESH_IMAGE: image,
        FLEETMESH_SECRETS: secrets,
        FLEETMESH_MCP_PORT: String(mcpPort),
        FLEETMESH_GRPC_PORT: String(await freePort()),
        FLEETMESH_DOCKER_SOCKET: socket,
        FLEETMESH_DOCKER_GID: String(statSync(socket).gid),
        FLEETMESH_UID: '1000',
        FLEETMESH_GID: '1000',
      },
    });
    await waitForStack(async () => (await fetch(`http://127.0.0.1:${mcpPort}/readyz`)).ok, 'the broker service to be ready on its published port');
  }, 300_000);

  afterAll(async () => {
    await client?.close();
    await removeStack().catch(() => undefined);
    await removeImages([image, NODE_BASE_IMAGE], env);
    temp.remove();
  }, 120_000);

  it('runs the agent as a global service that enrolls with the bootstrap token, reachable with the bootstrap admin token', async () => {
    expect((await docker('service', 'inspect', `${stack}_agent`, '--format', '{{json .Spec.Mode}}')).trim()).toBe('{"Global":{}}');
    client = new Client({ name: 'fleetmesh-stack-test', version: '1.0.0' });
    const token = readFileSync(join(secrets, BOOTSTRAP_FILES.adminToken), 'utf8').trim();
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${mcpPort}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    const hostName = readFileSync('/etc/hostname', 'utf8').trim();
    const online = await waitForStack(async () => {
      const listed = await call(client as Client, 'list_agents', { state: 'online' });
      return (listed.structuredContent.count as number) >= 1 ? listed.structuredContent : undefined;
    }, 'the global agent to enroll and connect');
    // The agent takes the node's host name, not its container's.
    expect(online).toMatchObject({ count: 1, agents: [{ name: hostName, state: 'online' }] });

    const status = await call(client, 'system_status', { host: hostName });
    expect(status.isError).toBeFalsy();
    expect(status.structuredContent).toMatchObject({ host: hostName, availability: 'available' });
    // The agent reaches the engine through the mounted socket: it sees the stack's own containers.
    expect(status.structuredContent.containers_running).toBeGreaterThanOrEqual(2);
  }, 150_000);

  it('reports the services healthy, and leaves nothing behind once removed', async () => {
    await waitForStack(async () => {
      const states = (await docker('ps', '--filter', `label=com.docker.stack.namespace=${stack}`, '--format', '{{.Status}}')).split('\n').filter(Boolean);
      return states.length === 2 && states.every((state) => state.includes('(healthy)'));
    }, 'both containers to be healthy');
    await client?.close();
    client = undefined;
    await removeStack();
    expect(await leftovers()).toEqual({ services: [], containers: [], networks: [], secrets: [], volumes: [] });
  }, 150_000);
});
