import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { removeContainers, testDocker } from './harness/containers.ts';
import { freePort } from './harness/free-port.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';

const APP = 'fm-web-app';

interface AppRow {
  name: string;
  source: string;
  installed: boolean;
  [key: string]: unknown;
}

describe('install tools against the real engine', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;
  let port: number;
  let blocker: Server | undefined;
  const temp = makeTempDir();
  const catalog = join(temp.path, 'apps');

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, [APP, 'fm-web-writer']);
    port = await freePort();
    mkdirSync(catalog);
    // A site's app: busybox httpd serving its volume, with a health check that fetches the page.
    writeFileSync(
      join(catalog, 'web.yaml'),
      [
        `name: ${APP}`,
        'description: A page served by busybox httpd from its volume.',
        'category: test',
        `image: ${inject('testImage')}`,
        'command: [sh, -c, "[ -f /www/index.html ] || echo hello from the app > /www/index.html; exec httpd -f -p 80 -h /www"]',
        `ports: ["${port}:80"]`,
        'volumes: ["www:/www"]',
        'healthcheck:',
        '  test: [CMD-SHELL, "wget -q -O /dev/null http://127.0.0.1/ || exit 1"]',
        '  interval: 500ms',
        '  retries: 3',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(catalog, 'missing.json'),
      JSON.stringify({ name: 'fm-missing', description: 'An image no host has.', image: 'fleetmesh-test/missing:1', ports: [] }),
    );
    writeFileSync(join(catalog, 'broken.yaml'), 'name: Broken App!\nimage: 3\n');
    fleet = await startTestFleet({ operationsLevel: 3 });
    await fleet.addAgent('engine-1', { collectors: 'default', dockerAddress: inject('dockerHost'), appCatalogDir: catalog });
    await fleet.addAgent('no-engine', { collectors: 'default', dockerAddress: '/nonexistent/docker.sock' });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
  });
  afterAll(async () => {
    blocker?.close();
    await client?.close();
    await fleet?.stop();
    await removeContainers(docker, [APP, 'fm-web-writer']);
    await docker
      .getVolume(`${APP}-www`)
      .remove()
      .catch(() => undefined);
    temp.remove();
  });

  it('lists the built-in catalog with the site’s apps, naming a file that is not a valid app', async () => {
    const result = await call(client, 'install_list');
    const hosts = (
      result.structuredContent as { hosts: { host: string; availability: string; apps?: AppRow[]; errors: { code: string; message: string }[] }[] }
    ).hosts;
    const engine = hosts.find((h) => h.host === 'engine-1');
    const names = engine?.apps?.map((a) => a.name) ?? [];
    expect(names).toEqual(expect.arrayContaining(['uptime-kuma', 'vaultwarden', APP, 'fm-missing']));
    expect(engine?.apps?.find((a) => a.name === APP)).toMatchObject({
      source: 'site',
      installed: false,
      category: 'test',
      ports: [{ host_port: port, container_port: 80, protocol: 'tcp' }],
      volumes: [{ name: `${APP}-www`, path: '/www' }],
    });
    expect(engine?.apps?.find((a) => a.name === 'uptime-kuma')?.source).toBe('builtin');
    expect(engine?.errors).toEqual([expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('broken.yaml') })]);
    // A host without an engine installs nothing: its collector is absent, the host left out and named once.
    expect(hosts.find((h) => h.host === 'no-engine')).toBeUndefined();
    expect(result.structuredContent.absent_collectors).toEqual([{ collector: 'install', hosts: ['no-engine'] }]);
  });

  it('refuses an app whose image is missing or whose port is taken, as a failed result that creates nothing', async () => {
    const missing = await call(client, 'install_app', { host: 'engine-1', app: 'fm-missing' });
    expect(missing.isError).toBeFalsy();
    expect(missing.structuredContent).toMatchObject({ status: 'failed', issues: [expect.stringContaining('fleetmesh-test/missing:1 is not on this host')] });

    blocker = createServer();
    const taken = await freePort();
    await new Promise<void>((resolve) => blocker?.listen(taken, '0.0.0.0', resolve));
    const refused = await call(client, 'install_app', { host: 'engine-1', app: APP, port: taken });
    expect(refused.structuredContent).toMatchObject({ status: 'failed', issues: [`port ${taken}/tcp is taken: something on the host listens there`] });
    blocker.close();
    const volumes = (await docker.listVolumes({ filters: { label: [`fleetmesh.app=${APP}`] } })).Volumes ?? [];
    expect(volumes).toEqual([]);
    await expect(docker.getContainer(APP).inspect()).rejects.toThrow();
  });

  it('installs an app that serves HTTP and passes its health check, with a volume of its own', async () => {
    const result = await call(client, 'install_app', { host: 'engine-1', app: APP });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ app: APP, status: 'installed', health: 'healthy', volumes: [`${APP}-www`], issues: [] });
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(await page.text()).toBe('hello from the app\n');

    const again = await call(client, 'install_app', { host: 'engine-1', app: APP });
    expect(again.structuredContent).toMatchObject({ status: 'already_installed' });
    const status = await call(client, 'install_status', { host: 'engine-1' });
    expect(status.structuredContent).toMatchObject({
      apps: [{ app: APP, state: 'running', health: 'healthy', installed: true, volumes: [{ name: `${APP}-www`, exists: true }] }],
      count: 1,
    });
  });

  it('uninstalls keeping the data, installs again with it, and purges only with confirm', async () => {
    const writer = await docker.createContainer({
      name: 'fm-web-writer',
      Image: inject('testImage'),
      Cmd: ['sh', '-c', 'echo kept > /www/kept.txt'],
      HostConfig: { Mounts: [{ Type: 'volume', Source: `${APP}-www`, Target: '/www' }] },
    });
    await writer.start();
    await writer.wait();
    await writer.remove();

    const uninstalled = await call(client, 'install_uninstall', { host: 'engine-1', app: APP });
    expect(uninstalled.structuredContent).toMatchObject({ status: 'uninstalled', container_removed: true, volumes_kept: [`${APP}-www`] });
    const status = await call(client, 'install_status', { host: 'engine-1', app: APP });
    expect(status.structuredContent).toMatchObject({
      apps: [{ app: APP, installed: false, state: 'uninstalled', volumes: [{ name: `${APP}-www`, exists: true }] }],
    });

    const reinstalled = await call(client, 'install_app', { host: 'engine-1', app: APP });
    expect(reinstalled.structuredContent).toMatchObject({ status: 'installed' });
    expect(await (await fetch(`http://127.0.0.1:${port}/kept.txt`)).text()).toBe('kept\n');

    const unconfirmed = await call(client, 'install_purge', { host: 'engine-1', app: APP });
    expect(unconfirmed.isError).toBe(true);
    expect(JSON.stringify(unconfirmed.structuredContent)).toContain('confirm_required');
    const purged = await call(client, 'install_purge', { host: 'engine-1', app: APP, confirm: true });
    expect(purged.structuredContent).toMatchObject({ status: 'purged', container_removed: true, volumes_removed: [`${APP}-www`] });
    expect((await docker.listVolumes({ filters: { label: [`fleetmesh.app=${APP}`] } })).Volumes ?? []).toEqual([]);
    const after = await call(client, 'install_status', { host: 'engine-1' });
    expect(after.structuredContent).toMatchObject({ apps: [], count: 0 });
  });

  it('needs explicit targets to install anything', async () => {
    const result = await call(client, 'install_app', { app: APP });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.structuredContent)).toContain('needs explicit targets');
  });
});
