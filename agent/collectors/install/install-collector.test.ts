import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installApp, installList, installPurge, installStatus, installUninstall } from '../../../shared/domains/install/install-actions.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { FakeEngine } from '../../../test/harness/fake-engine.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import type { InstallCollector } from './install-collector.ts';
import { installPlugin } from './install-plugin.ts';

/** A site's own app: no host port (nothing on this machine is bound), a volume and a health check. */
const NOTES_APP = {
  name: 'notes',
  description: 'A notes app of this site.',
  category: 'productivity',
  image: 'notes:2',
  environment: { MODE: 'prod' },
  volumes: ['data:/var/lib/notes'],
  healthcheck: { test: ['CMD', 'true'], interval: '5s' },
};

describe('the install collector on a fake engine', () => {
  const running: CollectorCalls<InstallCollector>[] = [];
  const temps: { remove(): void }[] = [];
  afterEach(async () => {
    for (const calls of running.splice(0)) await calls.stop();
    for (const temp of temps.splice(0)) temp.remove();
  });

  /** The collector with a site catalog holding these files. */
  function installsOn(engine: FakeEngine, siteFiles: Record<string, string> = { 'notes.json': JSON.stringify(NOTES_APP) }): CollectorCalls<InstallCollector> {
    const site = makeTempDir('fm-app-catalog-');
    temps.push(site);
    for (const [file, text] of Object.entries(siteFiles)) writeFileSync(join(site.path, file), text);
    const calls = new CollectorCalls(installPlugin.create, engine.client, { appCatalogDir: site.path });
    running.push(calls);
    return calls;
  }

  it("lists the built-in and the site's apps, which are installed, and names a site file that is not an app", async () => {
    const engine = new FakeEngine();
    engine.addContainer('uptime-kuma', { labels: { 'fleetmesh.app': 'uptime-kuma' } });
    const calls = installsOn(engine, { 'notes.json': JSON.stringify(NOTES_APP), 'broken.yaml': 'name: Not Valid!\n' });

    const listed = await calls.call(installList, {});
    const byName = Object.fromEntries((listed.payload?.apps ?? []).map((app) => [app.name, app]));
    expect(byName['uptime-kuma']).toMatchObject({ source: 'builtin', installed: true });
    expect(byName.notes).toMatchObject({ source: 'site', installed: false, volumes: [{ name: 'notes-data', path: '/var/lib/notes' }] });
    expect(listed.errors).toEqual([expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('broken.yaml') })]);
    expect((await calls.call(installList, { category: 'productivity' })).payload?.apps.map((app) => app.name)).toEqual(['notes']);
  });

  it('refuses an install for every reason at once, before it makes anything: no image, a taken name, a published port', async () => {
    const engine = new FakeEngine();
    engine.addContainer('notes');
    engine.addContainer('proxy', { ports: [{ private: 80, public: 3001, protocol: 'tcp' }] });
    const calls = installsOn(engine);
    engine.addImage('louislam/uptime-kuma:1');

    const notes = await calls.call(installApp, { app: 'notes' });
    expect(notes.payload).toMatchObject({
      status: 'failed',
      issues: [expect.stringContaining('image notes:2 is not on this host'), expect.stringContaining('a container named notes exists')],
    });
    const kuma = await calls.call(installApp, { app: 'uptime-kuma' });
    expect(kuma.payload).toMatchObject({ status: 'failed', issues: ['port 3001/tcp is taken: container proxy publishes it'] });
    expect(engine.volumes.size).toBe(0);
    expect([...engine.containers.values()].map((c) => c.name).sort()).toEqual(['notes', 'proxy']);
  });

  it('installs an app with its volumes, labels and environment, waits for its health check, and knows it is installed after', async () => {
    const engine = new FakeEngine();
    engine.addImage('notes:2');
    const calls = installsOn(engine);

    const installed = await calls.call(installApp, { app: 'notes' });
    expect(installed.payload).toMatchObject({ status: 'installed', health: 'healthy', volumes: ['notes-data'], issues: [] });
    expect(installed.chunks).toEqual([
      { phase: 'creating', app: 'notes' },
      { phase: 'waiting', app: 'notes' },
    ]);
    const container = engine.container('notes');
    expect(container).toMatchObject({ state: 'running', labels: { 'fleetmesh.app': 'notes' }, env: ['MODE=prod'] });
    expect(container.mounts).toEqual([{ type: 'volume', volume: 'notes-data', destination: '/var/lib/notes', readOnly: false }]);
    expect(engine.volumes.get('notes-data')?.labels).toEqual({ 'fleetmesh.app': 'notes' });

    expect((await calls.call(installApp, { app: 'notes' })).payload).toMatchObject({ status: 'already_installed', issues: [] });
    expect((await calls.call(installStatus, {})).payload?.apps).toEqual([
      expect.objectContaining({ app: 'notes', state: 'running', health: 'healthy', installed: true, volumes: [{ name: 'notes-data', exists: true }] }),
    ]);
  });

  it("pulls an app's missing image with the host's registry login before it installs, and says why when the pull fails", async () => {
    const engine = new FakeEngine();
    engine.registry.requireLogin('registry.test', 'deploy', 'pw');
    engine.registry.publish('registry.test/notes:2');
    const config = makeTempDir('fm-docker-config-');
    temps.push(config);
    writeFileSync(join(config.path, 'config.json'), JSON.stringify({ auths: { 'registry.test': { auth: Buffer.from('deploy:pw').toString('base64') } } }));
    const site = makeTempDir('fm-app-catalog-');
    temps.push(site);
    writeFileSync(join(site.path, 'notes.json'), JSON.stringify({ ...NOTES_APP, image: 'registry.test/notes:2' }));
    writeFileSync(join(site.path, 'gone.json'), JSON.stringify({ ...NOTES_APP, name: 'gone', image: 'registry.test/gone:1' }));
    const calls = new CollectorCalls(installPlugin.create, engine.client, { appCatalogDir: site.path }, { 'docker-config': config.path });
    running.push(calls);

    const installed = await calls.call(installApp, { app: 'notes' });
    expect(installed.payload).toMatchObject({ status: 'installed', health: 'healthy', issues: [] });
    expect(installed.chunks[0]).toEqual({ phase: 'pulling', app: 'notes' });
    expect(engine.registry.pulls).toEqual([{ image: 'registry.test/notes:2', auth: { username: 'deploy', password: 'pw', serveraddress: 'registry.test' } }]);

    const gone = await calls.call(installApp, { app: 'gone' });
    expect(gone.payload).toMatchObject({
      status: 'failed',
      issues: [expect.stringMatching(/^image registry\.test\/gone:1 is not on this host and could not be pulled: the registry registry\.test has no image/)],
    });
    expect([...engine.containers.values()].map((c) => c.name)).toEqual(['notes']);
  });

  it('answers failed with the exit code when the app exits instead of running', async () => {
    const engine = new FakeEngine();
    engine.addImage('notes:2', { exitCode: 2 });
    const calls = installsOn(engine);

    const failed = await calls.call(installApp, { app: 'notes' });
    expect(failed.payload).toMatchObject({ status: 'failed', issues: [expect.stringMatching(/^it exited with code 2: docker_logs name=notes/)] });
  });

  it('uninstalls keeping the volumes, which install_status still shows, and purges them', async () => {
    const engine = new FakeEngine();
    engine.addImage('notes:2');
    const calls = installsOn(engine);
    await calls.call(installApp, { app: 'notes' });

    expect((await calls.call(installUninstall, { app: 'notes' })).payload).toEqual({
      app: 'notes',
      status: 'uninstalled',
      container_removed: true,
      volumes_kept: ['notes-data'],
    });
    expect((await calls.call(installStatus, { app: 'notes' })).payload?.apps).toEqual([
      expect.objectContaining({ app: 'notes', state: 'uninstalled', installed: false, volumes: [{ name: 'notes-data', exists: true }] }),
    ]);
    expect((await calls.call(installPurge, { app: 'notes' })).payload).toMatchObject({
      status: 'purged',
      container_removed: false,
      volumes_removed: ['notes-data'],
    });
    expect(engine.volumes.size).toBe(0);
    expect((await calls.call(installPurge, { app: 'notes' })).payload).toMatchObject({ status: 'not_installed' });
  });

  it('answers collector_unavailable while the engine is away', async () => {
    const engine = new FakeEngine();
    const calls = installsOn(engine);
    engine.stopEngine();

    expect((await calls.call(installList, {})).errors).toEqual([
      expect.objectContaining({ code: 'collector_unavailable', collector: 'install', message: expect.stringContaining('cannot be reached') }),
    ]);
  });
});
