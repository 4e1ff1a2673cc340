import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { composeDown, composePull, composeUp } from '../../../shared/domains/rollout/compose-actions.ts';
import { imageList, imagePrune, imagePull } from '../../../shared/domains/rollout/image-actions.ts';
import { containerUpdateImage } from '../../../shared/domains/rollout/update-actions.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { FakeEngine } from '../../../test/harness/fake-engine.ts';
import { makeTempDir } from '../../../test/harness/temp-dir.ts';
import type { RolloutCollector } from './rollout-collector.ts';
import { rolloutPlugin } from './rollout-plugin.ts';

const REGISTRY = 'registry.test:5000';
const HEALTHCHECK = { Test: ['CMD', 'true'], Interval: 500_000_000 };
/** What each version of the app's image gives its containers. */
const imageConfig = (version: string) => ({
  Env: ['PATH=/bin', `APP_VERSION=${version}`],
  Labels: { 'org.example.version': version },
  Healthcheck: HEALTHCHECK,
});

describe('the rollout collector on a fake engine', () => {
  const running: CollectorCalls<RolloutCollector>[] = [];
  const temps: { remove(): void }[] = [];
  afterEach(async () => {
    for (const calls of running.splice(0)) await calls.stop();
    for (const temp of temps.splice(0)) temp.remove();
  });

  /** The collector, on a host whose Docker config holds the registry's login. */
  function rolloutOn(engine: FakeEngine): CollectorCalls<RolloutCollector> {
    const config = makeTempDir('fm-docker-config-');
    temps.push(config);
    writeFileSync(join(config.path, 'config.json'), JSON.stringify({ auths: { [REGISTRY]: { auth: Buffer.from('deploy:pw').toString('base64') } } }));
    engine.registry.requireLogin(REGISTRY, 'deploy', 'pw');
    const calls = new CollectorCalls(rolloutPlugin.create, engine.client, {}, { 'docker-config': config.path });
    running.push(calls);
    return calls;
  }

  /** An app container made from version 1, with settings of its own. */
  function appContainer(engine: FakeEngine, name: string, labels: Record<string, string> = {}) {
    const image = engine.images.find((i) => i.tags.includes(`${REGISTRY}/app:1`)) ?? engine.addImage(`${REGISTRY}/app:1`, { config: imageConfig('1') });
    return engine.addContainer(name, {
      image: `${REGISTRY}/app:1`,
      imageId: image.id,
      env: ['PATH=/bin', 'APP_VERSION=1', 'MODE=prod'],
      labels: { 'org.example.version': '1', team: 'shop', ...labels },
      healthcheck: HEALTHCHECK,
      health: 'healthy',
    });
  }

  it("moves a container to a new tag it pulls with the host's login, keeping its own settings, and removes the previous one", async () => {
    const engine = new FakeEngine();
    appContainer(engine, 'web');
    const v2 = engine.registry.publish(`${REGISTRY}/app:2`, { config: imageConfig('2') });
    const calls = rolloutOn(engine);

    const answer = await calls.call(containerUpdateImage, { name: 'web', image: ':2' });
    expect(answer.errors).toEqual([]);
    expect(answer.payload).toMatchObject({
      status: 'updated',
      image: `${REGISTRY}/app:2`,
      containers: [{ container: 'web', from_image: `${REGISTRY}/app:1`, to_image: `${REGISTRY}/app:2`, status: 'updated', health: 'healthy', reason: null }],
      message: `web now runs ${REGISTRY}/app:2 (healthy).`,
    });
    const web = engine.container('web');
    expect(web).toMatchObject({ imageId: v2.id, state: 'running', labels: { team: 'shop', 'org.example.version': '2' } });
    expect(web.env.sort()).toEqual(['APP_VERSION=2', 'MODE=prod', 'PATH=/bin']);
    expect([...engine.containers.values()].map((c) => c.name)).toEqual(['web']);
    expect(engine.registry.pulls).toEqual([{ image: `${REGISTRY}/app:2`, auth: { username: 'deploy', password: 'pw', serveraddress: REGISTRY } }]);
    expect(JSON.stringify([answer.payload, answer.chunks])).not.toContain('pw"');
    expect(answer.chunks).toEqual(
      expect.arrayContaining([expect.objectContaining({ layers_done: 2, layers_total: 2 }), { container: 'web', phase: 'waiting' }]),
    );

    expect((await calls.call(containerUpdateImage, { name: 'web', image: `${REGISTRY}/app:2` })).payload).toMatchObject({
      status: 'unchanged',
      message: `web already runs ${REGISTRY}/app:2.`,
    });
  });

  it('ends on the previous container when the new image fails its health check, and says so', async () => {
    const engine = new FakeEngine();
    const before = appContainer(engine, 'web');
    engine.registry.publish(`${REGISTRY}/app:bad`, { config: imageConfig('bad'), health: 'unhealthy' });
    const calls = rolloutOn(engine);

    const answer = await calls.call(containerUpdateImage, { name: 'web', image: ':bad' });
    expect(answer.payload).toMatchObject({ status: 'rolled_back', containers: [{ status: 'rolled_back', health: 'healthy' }] });
    expect(answer.payload?.message).toMatch(
      new RegExp(
        `^web stays on ${REGISTRY}/app:1: the new container failed: its health check failed .*; the previous container runs again on ${REGISTRY}/app:1\\.$`,
      ),
    );
    expect(engine.container('web')).toMatchObject({ id: before.id, imageId: before.imageId, state: 'running' });
    expect([...engine.containers.values()].map((c) => c.name)).toEqual(['web']);
  });

  it("rolls a compose service's containers one at a time and leaves the rest once one fails", async () => {
    const engine = new FakeEngine();
    for (const n of [1, 2]) {
      appContainer(engine, `shop_web_${n}`, {
        'com.docker.compose.project': 'shop',
        'com.docker.compose.service': 'web',
        'com.docker.compose.container-number': String(n),
      });
    }
    appContainer(engine, 'shop_db_1', { 'com.docker.compose.project': 'shop', 'com.docker.compose.service': 'db' });
    engine.registry.publish(`${REGISTRY}/app:bad`, { config: imageConfig('bad'), health: 'unhealthy' });
    const calls = rolloutOn(engine);

    const answer = await calls.call(containerUpdateImage, { project: 'shop', service: 'web', image: ':bad' });
    expect(answer.payload?.containers.map((row) => [row.container, row.service, row.status])).toEqual([
      ['shop_web_1', 'web', 'rolled_back'],
      ['shop_web_2', 'web', 'skipped'],
    ]);
    expect(answer.payload?.containers[1]?.reason).toBe('shop_web_1 did not come up on the new image, so this one was not touched');

    const unknown = await calls.call(containerUpdateImage, { project: 'shop', service: 'cache', image: ':2' });
    expect(unknown.errors).toEqual([expect.objectContaining({ code: 'not_found', hint: 'Its services: db, web.' })]);
    const both = await calls.call(containerUpdateImage, { name: 'shop_db_1', project: 'shop', image: ':2' });
    expect(both.errors).toEqual([expect.objectContaining({ code: 'invalid_argument' })]);
  });

  it('pulls a project’s images, then moves the containers whose tag names a newer image and starts the stopped ones', async () => {
    const engine = new FakeEngine();
    const labels = (service: string) => ({ 'com.docker.compose.project': 'shop', 'com.docker.compose.service': service });
    appContainer(engine, 'shop_web_1', labels('web'));
    const worker = appContainer(engine, 'shop_worker_1', labels('worker'));
    worker.state = 'exited';
    engine.addContainer('shop_cache_1', { image: 'cache:7', labels: labels('cache'), healthcheck: HEALTHCHECK, health: 'healthy' });
    engine.addImage('cache:7');
    engine.registry.publish('cache:7');
    const v1 = engine.registry.publish(`${REGISTRY}/app:1`, { config: imageConfig('1.1') });
    const calls = rolloutOn(engine);

    const pulled = await calls.call(composePull, { project: 'shop' });
    expect(pulled.payload?.images.map((row) => [row.image, row.services, row.status])).toEqual([
      ['cache:7', ['cache'], 'pulled'],
      [`${REGISTRY}/app:1`, ['web', 'worker'], 'pulled'],
    ]);
    expect(pulled.payload?.message).toBe('2 of 2 images of shop were new. compose_up project=shop moves its containers to them.');

    const up = await calls.call(composeUp, { project: 'shop', services: ['web', 'worker'] });
    expect(up.payload).toMatchObject({ project: 'shop', status: 'updated' });
    expect(up.payload?.containers.map((row) => [row.container, row.status])).toEqual([
      ['shop_web_1', 'updated'],
      ['shop_worker_1', 'updated'],
    ]);
    expect(engine.container('shop_web_1')).toMatchObject({ imageId: v1.id, state: 'running' });
    expect(engine.container('shop_worker_1')).toMatchObject({ imageId: v1.id, state: 'running' });
    expect((await calls.call(composeUp, { project: 'shop', services: ['web'] })).payload).toMatchObject({
      status: 'up_to_date',
      containers: [{ container: 'shop_web_1', status: 'unchanged' }],
    });
  });

  it('takes a project down, its networks too, keeping its volumes, and names the projects there are when one is not', async () => {
    const engine = new FakeEngine();
    const labels = { 'com.docker.compose.project': 'shop' };
    engine.addContainer('shop_web_1', { labels, mounts: [{ type: 'volume', volume: 'shop_data', destination: '/data' }] });
    Object.assign(engine.addVolume('shop_data').labels, labels);
    engine.addNetwork('shop_default', labels);
    engine.addContainer('other');
    const calls = rolloutOn(engine);

    expect((await calls.call(composeDown, { project: 'shop' })).payload).toEqual({
      project: 'shop',
      containers_removed: ['shop_web_1'],
      networks_removed: ['shop_default'],
      volumes_kept: ['shop_data'],
    });
    expect([...engine.containers.values()].map((c) => c.name)).toEqual(['other']);
    expect(engine.volumes.has('shop_data')).toBe(true);
    expect((await calls.call(composeDown, { project: 'shop' })).errors).toEqual([
      expect.objectContaining({ code: 'not_found', message: 'no compose project "shop" on this host' }),
    ]);
  });

  it('lists images with the containers each makes, and prunes only unused ones, untagged unless all', async () => {
    const engine = new FakeEngine();
    appContainer(engine, 'web');
    engine.addImage(`${REGISTRY}/app:0`, { sizeBytes: 1000, config: { Labels: { 'fleetmesh-test': 'old' } } });
    const dangling = engine.addImage('', { sizeBytes: 500 });
    dangling.tags = [];
    const calls = rolloutOn(engine);

    const listed = await calls.call(imageList, {});
    expect(listed.payload?.count).toBe(3);
    expect(listed.payload?.total_size_bytes).toBe(1500);
    expect(listed.payload?.images.find((row) => row.tags.includes(`${REGISTRY}/app:1`))).toMatchObject({ containers: 1, dangling: false });
    expect((await calls.call(imageList, { dangling: true })).payload?.images.map((row) => row.id)).toEqual([dangling.id.slice(7, 19)]);

    expect((await calls.call(imagePrune, {})).payload).toEqual({ deleted: [dangling.id.slice(7, 19)], untagged: [], count: 1, space_reclaimed_bytes: 500 });
    expect((await calls.call(imagePrune, { all: true, label: 'fleetmesh-test=old' })).payload).toMatchObject({
      untagged: [`${REGISTRY}/app:0`],
      count: 1,
      space_reclaimed_bytes: 1000,
    });
    expect(engine.images.map((image) => image.tags)).toEqual([[`${REGISTRY}/app:1`]]);
  });

  it('answers collector_unavailable while the engine is away', async () => {
    const engine = new FakeEngine();
    const calls = rolloutOn(engine);

    engine.stopEngine();
    expect((await calls.call(imagePull, { image: `${REGISTRY}/app:2` })).errors).toEqual([
      expect.objectContaining({ code: 'collector_unavailable', collector: 'rollout' }),
    ]);
  });
});
