import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { captureLogger } from './harness/capture-logger.ts';
import { removeContainers, testDocker } from './harness/containers.ts';
import { removeImages, run } from './harness/fleetmesh-image.ts';
import { call, identityToken, mcpClient, text } from './harness/mcp-client.ts';
import { type PrivateRegistry, startPrivateRegistry } from './harness/private-registry.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

/** Debian's docker-compose v1, which scripts/test-packages.sh installs. */
const COMPOSE = '/usr/bin/docker-compose';
const CONTAINER = 'fm-roll-web';
const PROJECT = 'fmroll';
const APP = 'fm-roll-app';
const PASSWORD = 'registry-secret-7f3a9c';
/** Every image built here carries it, so a prune narrowed to it leaves the other tests' images alone. */
const LABEL = 'fleetmesh.test=rollout';

interface HostAnswer {
  host: string;
  availability: string;
  failed_collectors?: string[];
  errors: { code: string; message: string; hint?: string }[];
  [key: string]: unknown;
}

const hostsOf = (result: { structuredContent: Record<string, unknown> }) => (result.structuredContent as { hosts: HostAnswer[] }).hosts;

/**
 * Rolling a Docker host forward against real parts: a private registry that
 * wants a login (Debian's docker-registry over TLS), images pushed to it, the
 * private engine pulling with the login the agent's own Docker config holds,
 * and compose projects made by Debian's docker-compose.
 */
describe('rollout tools against a private registry and the real engine', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;
  let registry: PrivateRegistry;
  const broker = captureLogger();
  const temp = makeTempDir('fm-rollout-');
  const env = { ...process.env, DOCKER_HOST: inject('dockerHost'), DOCKER_CONFIG: join(temp.path, 'pusher') };
  /** What every call sent and got back, for the sniff at the end. */
  const exchanged: unknown[] = [];
  const ids: Record<string, string> = {};
  const ref = (tag: string) => `${registry.address}/fleetmesh-test/roll:${tag}`;

  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = await call(client, name, args);
    exchanged.push(args, result);
    return result;
  };
  const imageId = async (reference: string) => (await docker.getImage(reference).inspect()).Id;
  const compose = (...args: string[]) => run(COMPOSE, ['--project-name', PROJECT, '--file', join(temp.path, 'compose.yml'), ...args], { env });

  /** Builds an image whose health check passes unless its /version says broken, tagged `tag` in the registry. */
  async function buildImage(tag: string, version: string): Promise<void> {
    const context = join(temp.path, `build-${tag}`);
    mkdirSync(context);
    writeFileSync(join(context, 'version'), `${version}\n`);
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${inject('testImage')}`,
        `LABEL ${LABEL}`,
        'COPY version /version',
        'HEALTHCHECK --interval=1s --timeout=2s --retries=2 CMD grep -qv broken /version',
        `CMD ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]`,
        '',
      ].join('\n'),
    );
    await run('docker', ['build', '-q', '-t', ref(tag), context], { env: { ...env, DOCKER_BUILDKIT: '0' } });
    ids[tag] = await imageId(ref(tag));
  }

  /** Points the registry's tag at the image `from` names, leaving the engine's own tag where it was. */
  async function moveRegistryTag(tag: string, from: string): Promise<void> {
    const before = await imageId(ref(tag));
    await run('docker', ['tag', ref(from), ref(tag)], { env });
    await run('docker', ['push', ref(tag)], { env });
    await run('docker', ['tag', before, ref(tag)], { env });
  }

  beforeAll(async () => {
    docker = testDocker();
    // A local address of the run's own that is not loopback: the private engine's bridge gateway.
    const gateway = (await docker.getNetwork('bridge').inspect()).IPAM?.Config?.[0]?.Gateway as string;
    expect(gateway).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    registry = await startPrivateRegistry(gateway, 'deployer', PASSWORD);
    const login = Buffer.from(`deployer:${PASSWORD}`).toString('base64');
    // The test's own login, to push; the agent's, in its host's Docker config; and a host without one.
    for (const dir of ['pusher', 'agent-config', 'bare-config']) mkdirSync(join(temp.path, dir));
    const auths = { auths: { [registry.address]: { auth: login } } };
    writeFileSync(join(temp.path, 'pusher', 'config.json'), JSON.stringify(auths));
    writeFileSync(join(temp.path, 'agent-config', 'config.json'), JSON.stringify(auths), { mode: 0o600 });
    writeFileSync(join(temp.path, 'bare-config', 'config.json'), JSON.stringify({ auths: {} }));

    await buildImage('1', 'one');
    await buildImage('2', 'broken');
    await buildImage('3', 'three');
    await run('docker', ['tag', ref('1'), ref('stable')], { env });
    for (const tag of ['1', '2', '3', 'stable']) await run('docker', ['push', ref(tag)], { env });
    // The engine forgets them: every image the tools use comes from the registry with the agent's login.
    await removeImages(['1', '2', '3', 'stable'].map(ref), env);

    const catalog = join(temp.path, 'apps');
    mkdirSync(catalog);
    writeFileSync(join(catalog, 'roll.json'), JSON.stringify({ name: APP, description: 'An app from the private registry.', image: ref('1'), ports: [] }));
    writeFileSync(
      join(temp.path, 'compose.yml'),
      [
        "version: '2.4'",
        'services:',
        '  web:',
        `    image: ${ref('stable')}`,
        '    environment:',
        '      KEEP: from-compose',
        '    volumes: ["data:/data"]',
        '    stop_grace_period: 2s',
        'volumes:',
        '  data: {}',
        '',
      ].join('\n'),
    );

    fleet = await startTestFleet({ operationsLevel: 3, log: broker.log });
    await fleet.addAgent('engine-1', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      appCatalogDir: catalog,
      domainFlags: { 'docker-config': join(temp.path, 'agent-config') },
    });
    await fleet.addAgent('no-login', {
      collectors: 'default',
      dockerAddress: inject('dockerHost'),
      domainFlags: { 'docker-config': join(temp.path, 'bare-config') },
    });
    await fleet.addAgent('no-engine', { collectors: 'default', dockerAddress: '/nonexistent/docker.sock' });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await fleet?.stop();
    if (docker) {
      await compose('down', '--volumes').catch(() => undefined);
      await removeContainers(docker, [CONTAINER, `${CONTAINER}-fleetmesh-previous`, APP]);
      await docker
        .getVolume(`${APP}-data`)
        .remove()
        .catch(() => undefined);
      if (registry) await removeImages(['1', '2', '3', 'stable'].map(ref), env);
    }
    await registry?.stop();
    temp.remove();
  }, 60_000);

  it('pulls with the login of the agent host’s Docker config, fleet-wide with partial results', async () => {
    const result = await tool('image_pull', { hosts: ['engine-1', 'no-engine'], image: ref('1') });
    const hosts = hostsOf(result);
    expect(hosts.find((h) => h.host === 'engine-1')).toMatchObject({
      availability: 'available',
      image: ref('1'),
      registry: registry.address,
      status: 'pulled',
      previous_id: null,
      credentials: expect.stringContaining(join(temp.path, 'agent-config')),
    });
    expect(hosts.find((h) => h.host === 'no-engine')).toMatchObject({ availability: 'unavailable', errors: [{ code: 'collector_unavailable' }] });
    expect(await imageId(ref('1'))).toBe(ids['1']);

    const again = await tool('image_pull', { host: 'engine-1', image: ref('1') });
    expect(again.structuredContent).toMatchObject({ status: 'up_to_date' });

    // The same engine, through an agent whose host holds no login: the registry refuses, and the answer says what to do on that host.
    const refused = await tool('image_pull', { host: 'no-login', image: ref('3') });
    const errors = (refused.structuredContent as { errors: HostAnswer['errors'] }).errors;
    expect(errors).toEqual([expect.objectContaining({ code: 'forbidden', message: expect.stringContaining(`holds no login for ${registry.address}`) })]);
    expect(errors[0]?.hint).toContain(`docker login ${registry.address}`);
    expect(text(refused)).toContain(`holds no login for ${registry.address}`);
  });

  it('shows the images to a read-only identity and keeps pulls from it', async () => {
    const reader = await mcpClient(fleet.broker, await identityToken(fleet.broker, 0));
    try {
      const tools = (await reader.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('image_list');
      expect(tools).not.toContain('image_pull');
      const refused = await call(reader, 'image_pull', { host: 'engine-1', image: ref('3') });
      expect(refused.structuredContent.error).toMatchObject({ code: 'not_found', message: 'unknown tool: image_pull' });
    } finally {
      await reader.close();
    }
    await expect(docker.getImage(ref('3')).inspect()).rejects.toThrow();
  });

  it('lists the images with the containers using each', async () => {
    const result = await tool('image_list', { hosts: ['engine-1', 'no-engine'], reference: `${registry.address}/fleetmesh-test/roll` });
    const hosts = hostsOf(result);
    const engine = hosts.find((h) => h.host === 'engine-1') as HostAnswer & { images: { tags: string[]; containers: number; size_bytes: number }[] };
    expect(engine.images).toEqual([expect.objectContaining({ tags: [ref('1')], containers: 0, dangling: false })]);
    expect(engine.images[0]?.size_bytes).toBeGreaterThan(0);
    expect(hosts.find((h) => h.host === 'no-engine')).toMatchObject({ availability: 'unavailable' });
  });

  it('restores the previous container when the new image fails its health check, and moves it to a healthy one keeping its configuration', async () => {
    const created = await docker.createContainer({
      name: CONTAINER,
      Image: ref('1'),
      Env: ['KEEP=from-run'],
      Labels: { 'fleetmesh.test.keep': 'yes' },
      HostConfig: { RestartPolicy: { Name: 'unless-stopped' } },
    });
    await created.start();
    await waitFor(async () => (await created.inspect()).State.Health?.Status === 'healthy', { what: `${CONTAINER} healthy` });

    const failed = await tool('container_update_image', { host: 'engine-1', name: CONTAINER, image: ':2', timeout_s: 30 });
    expect(failed.structuredContent).toMatchObject({
      status: 'rolled_back',
      image: ref('2'),
      containers: [{ container: CONTAINER, from_image: ref('1'), to_image: ref('2'), status: 'rolled_back', health: 'healthy' }],
    });
    const message = (failed.structuredContent as { message: string }).message;
    expect(message).toContain(`${CONTAINER} stays on ${ref('1')}`);
    expect(message).toContain('health check failed');
    expect(text(failed)).toContain(`${CONTAINER} stays on ${ref('1')}`);
    const restored = await docker.getContainer(CONTAINER).inspect();
    expect(restored.Image).toBe(ids['1']);
    expect(restored.State.Running).toBe(true);
    expect(restored.Config.Env).toContain('KEEP=from-run');
    expect(await docker.listContainers({ all: true, filters: { name: [`${CONTAINER}-fleetmesh-previous`] } })).toEqual([]);
    // The failing image was pulled with the host's login on the way.
    expect(await imageId(ref('2'))).toBe(ids['2']);

    const moved = await tool('container_update_image', { host: 'engine-1', name: CONTAINER, image: ':3', timeout_s: 30 });
    expect(moved.structuredContent).toMatchObject({
      status: 'updated',
      containers: [{ container: CONTAINER, from_image: ref('1'), to_image: ref('3'), status: 'updated', health: 'healthy' }],
    });
    expect(text(moved)).toContain(`${CONTAINER} now runs ${ref('3')}`);
    const updated = await docker.getContainer(CONTAINER).inspect();
    expect(updated.Image).toBe(ids['3']);
    expect(updated.Config.Image).toBe(ref('3'));
    expect(updated.Config.Env).toContain('KEEP=from-run');
    expect(updated.Config.Labels).toMatchObject({ 'fleetmesh.test.keep': 'yes' });
    expect(updated.HostConfig.RestartPolicy?.Name).toBe('unless-stopped');
    await removeContainers(docker, [CONTAINER]);
  }, 120_000);

  it('pulls and brings up a compose project docker-compose made, rolling back a service whose new image fails, and takes it down', async () => {
    // The project's tag is on the host (pulled by the agent), as docker-compose up needs it.
    expect((await tool('image_pull', { host: 'engine-1', image: ref('stable') })).structuredContent).toMatchObject({ status: 'pulled' });
    await compose('up', '-d');
    const container = `${PROJECT}_web_1`;
    await waitFor(async () => (await docker.getContainer(container).inspect()).State.Health?.Status === 'healthy', { what: `${container} healthy` });

    // The registry's stable tag moves to the third image; the host still runs the first.
    await moveRegistryTag('stable', '3');
    const pulled = await tool('compose_pull', { host: 'engine-1', project: PROJECT });
    expect(pulled.structuredContent).toMatchObject({ project: PROJECT, images: [{ image: ref('stable'), services: ['web'], status: 'pulled' }] });
    const up = await tool('compose_up', { host: 'engine-1', project: PROJECT, timeout_s: 30 });
    expect(up.structuredContent).toMatchObject({
      project: PROJECT,
      status: 'updated',
      containers: [{ container, service: 'web', status: 'updated', health: 'healthy' }],
    });
    let web = await docker.getContainer(container).inspect();
    expect(web.Image).toBe(ids['3']);
    expect(web.Config.Env).toContain('KEEP=from-compose');
    expect(web.Config.Labels).toMatchObject({ 'com.docker.compose.project': PROJECT, 'com.docker.compose.service': 'web' });
    expect(web.Mounts.map((m) => m.Name)).toContain(`${PROJECT}_data`);

    // The service by name, to the broken image's own tag: tried, and back on the third.
    const service = await tool('container_update_image', { host: 'engine-1', project: PROJECT, service: 'web', image: ':2', timeout_s: 30 });
    expect(service.structuredContent).toMatchObject({
      status: 'rolled_back',
      containers: [{ container, service: 'web', from_image: ref('stable'), to_image: ref('2'), status: 'rolled_back' }],
    });
    web = await docker.getContainer(container).inspect();
    expect(web.Image).toBe(ids['3']);
    expect(web.Config.Labels).toMatchObject({ 'com.docker.compose.project': PROJECT, 'com.docker.compose.service': 'web' });

    // Then to the broken image: compose_up tries it and ends on the third again.
    await moveRegistryTag('stable', '2');
    expect((await tool('compose_pull', { host: 'engine-1', project: PROJECT })).structuredContent).toMatchObject({ images: [{ status: 'pulled' }] });
    const back = await tool('compose_up', { host: 'engine-1', project: PROJECT, timeout_s: 30 });
    expect(back.structuredContent).toMatchObject({ status: 'rolled_back', containers: [{ container, status: 'rolled_back', health: 'healthy' }] });
    expect(text(back)).toContain(`${container} stays on ${ref('stable')}`);
    web = await docker.getContainer(container).inspect();
    expect(web.Image).toBe(ids['3']);
    expect(web.State.Running).toBe(true);

    const unconfirmed = await tool('compose_down', { host: 'engine-1', project: PROJECT });
    expect(unconfirmed.isError).toBe(true);
    expect(unconfirmed.structuredContent).toMatchObject({ error: { code: 'confirm_required' } });
    expect((await docker.getContainer(container).inspect()).State.Running).toBe(true);
    const down = await tool('compose_down', { host: 'engine-1', project: PROJECT, confirm: true });
    expect(down.structuredContent).toMatchObject({
      project: PROJECT,
      containers_removed: [container],
      networks_removed: [`${PROJECT}_default`],
      volumes_kept: [`${PROJECT}_data`],
    });
    expect(await docker.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${PROJECT}`] } })).toEqual([]);
    await docker.getVolume(`${PROJECT}_data`).inspect();

    const gone = await tool('compose_up', { host: 'engine-1', project: PROJECT });
    expect((gone.structuredContent as { errors: HostAnswer['errors'] }).errors).toEqual([expect.objectContaining({ code: 'not_found' })]);
  }, 180_000);

  it('prunes only unused images, then install_app pulls its missing image with the host’s login', async () => {
    const unconfirmed = await tool('image_prune', { host: 'engine-1', all: true, label: LABEL });
    expect(unconfirmed.structuredContent).toMatchObject({ error: { code: 'confirm_required' } });
    await docker.getImage(ref('1')).inspect();
    const pruned = await tool('image_prune', { host: 'engine-1', all: true, label: LABEL, confirm: true });
    const payload = pruned.structuredContent as { deleted: string[]; untagged: string[]; count: number; space_reclaimed_bytes: number };
    expect(payload.untagged).toEqual(expect.arrayContaining([ref('1'), ref('2')]));
    expect(payload.count).toBe(payload.deleted.length);
    await expect(docker.getImage(ref('1')).inspect()).rejects.toThrow();
    // The busybox image the other tests use is unlabelled and stays.
    await docker.getImage(inject('testImage')).inspect();

    const installed = await tool('install_app', { host: 'engine-1', app: APP });
    expect(installed.structuredContent).toMatchObject({ app: APP, status: 'installed' });
    expect(await docker.getContainer(APP).inspect()).toMatchObject({ Image: ids['1'] });
    await removeContainers(docker, [APP]);
  }, 120_000);

  it('never lets the registry password reach the broker: not in its audit, its logs, its data dir, nor any call or answer', async () => {
    const secrets = [PASSWORD, Buffer.from(`deployer:${PASSWORD}`).toString('base64')];
    const audit = JSON.stringify(await fleet.broker.store.audit.recent({ limit: 1000 }));
    expect(audit).toContain('image_pull');
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else files.push(readFileSync(path).toString('latin1'));
      }
    };
    walk(fleet.broker.options.dataDir);
    expect(files.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(audit).not.toContain(secret);
      expect(JSON.stringify(broker.lines)).not.toContain(secret);
      expect(JSON.stringify(exchanged)).not.toContain(secret);
      for (const file of files) expect(file.includes(secret)).toBe(false);
    }
  });
});
