import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeEngine } from '../../test/harness/fake-engine.ts';
import { makeTempDir } from '../../test/harness/temp-dir.ts';
import { ImagePuller } from './image-puller.ts';
import { RegistryCredentials } from './registry-credentials.ts';

describe('ImagePuller on a fake engine', () => {
  const temps: { remove(): void }[] = [];
  afterEach(() => {
    for (const temp of temps.splice(0)) temp.remove();
  });

  /** A puller whose host's Docker config holds these logins. */
  function pullerOn(engine: FakeEngine, auths: Record<string, { auth: string }> = {}): ImagePuller {
    const temp = makeTempDir('fm-puller-');
    temps.push(temp);
    writeFileSync(join(temp.path, 'config.json'), JSON.stringify({ auths }));
    return new ImagePuller(engine.client, new RegistryCredentials(temp.path));
  }

  it("pulls with the host's login, hands it to the engine alone, and tells a new image from one already there", async () => {
    const engine = new FakeEngine();
    engine.registry.requireLogin('registry.test:5000', 'deploy', 'pw');
    engine.registry.publish('registry.test:5000/app:2', { sizeBytes: 4096 });
    const puller = pullerOn(engine, { 'registry.test:5000': { auth: Buffer.from('deploy:pw').toString('base64') } });
    const progress: unknown[] = [];

    const pulled = await puller.pull('registry.test:5000/app:2', { signal: new AbortController().signal, onProgress: (p) => progress.push(p) });
    expect(pulled).toMatchObject({ image: 'registry.test:5000/app:2', registry: 'registry.test:5000', status: 'pulled', previous_id: null, size_bytes: 4096 });
    expect(pulled.credentials).toMatch(/config\.json$/);
    expect(engine.registry.pulls).toEqual([
      { image: 'registry.test:5000/app:2', auth: { username: 'deploy', password: 'pw', serveraddress: 'registry.test:5000' } },
    ]);
    expect(progress.at(-1)).toEqual({ image: 'registry.test:5000/app:2', layers_done: 2, layers_total: 2 });

    const again = await puller.pull('registry.test:5000/app:2', { signal: new AbortController().signal });
    expect(again).toMatchObject({ status: 'up_to_date', id: pulled.id, previous_id: pulled.id });
    const moved = engine.registry.publish('registry.test:5000/app:2');
    expect(await puller.pull('registry.test:5000/app:2', { signal: new AbortController().signal })).toMatchObject({
      status: 'pulled',
      id: moved.id,
      previous_id: pulled.id,
    });
  });

  it('says a registry wants a login the host lacks as forbidden, naming where to log in, and a missing tag as not_found', async () => {
    const engine = new FakeEngine();
    engine.registry.requireLogin('registry.test:5000', 'deploy', 'pw');
    const puller = pullerOn(engine);
    await expect(puller.pull('registry.test:5000/app:2', { signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining("the agent's host holds no login for registry.test:5000"),
      hint: expect.stringContaining('docker login registry.test:5000'),
    });
    await expect(pullerOn(engine).pull('app:9', { signal: new AbortController().signal })).rejects.toMatchObject({ code: 'not_found' });
    await expect(pullerOn(engine).pull('-app', { signal: new AbortController().signal })).rejects.toMatchObject({ code: 'invalid_argument' });
  });
});
