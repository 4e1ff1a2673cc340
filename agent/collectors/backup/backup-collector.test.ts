import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { backupCreate, backupDrill, backupList, backupRestore } from '../../../shared/domains/backup/backup-actions.ts';
import { CollectorCalls } from '../../../test/harness/collector-calls.ts';
import { FakeEngine } from '../../../test/harness/fake-engine.ts';
import { entriesOf } from '../../../test/harness/tar-entries.ts';
import { waitFor } from '../../../test/harness/wait.ts';
import type { BackupCollector } from './backup-collector.ts';
import { backupPlugin } from './backup-plugin.ts';

/** An engine with an app whose named volume holds a note, a cache and a log, beside a bind mount of the host. */
function engineWithApp(): FakeEngine {
  const engine = new FakeEngine();
  engine.addImage('app:1');
  engine.addVolume('app-data', { files: { 'notes.txt': 'keep me', 'cache/blob.bin': 'throwaway', 'logs/app.log': 'noise' } });
  engine.addContainer('app', {
    image: 'app:1',
    env: ['MODE=prod'],
    healthcheck: { Test: ['CMD', 'true'] },
    mounts: [
      { type: 'volume', volume: 'app-data', destination: '/data' },
      { type: 'bind', source: '/srv/app', destination: '/host' },
    ],
  });
  return engine;
}

/** The files of a .tar.gz archive, by path. */
function archivedFiles(path: string): Record<string, string> {
  return Object.fromEntries(
    entriesOf(gunzipSync(readFileSync(path)))
      .filter((entry) => entry.content)
      .map((entry) => [entry.path, entry.content?.toString() ?? '']),
  );
}

describe('the backup collector on a fake engine', () => {
  const running: CollectorCalls<BackupCollector>[] = [];
  afterEach(async () => {
    for (const calls of running.splice(0)) await calls.stop();
  });

  function backupsOn(engine: FakeEngine): CollectorCalls<BackupCollector> {
    const calls = new CollectorCalls(backupPlugin.create, engine.client);
    running.push(calls);
    return calls;
  }

  it("archives a container's named volumes through a helper it never starts, leaving out bind mounts and excluded paths", async () => {
    const engine = engineWithApp();
    const calls = backupsOn(engine);

    const created = await calls.call(backupCreate, { container: 'app', exclude: ['cache', '*.log'] });
    expect(created.errors).toEqual([]);
    const archive = created.payload;
    expect(archive).toMatchObject({
      source: 'app',
      source_kind: 'container',
      volumes: [{ name: 'app-data', destination: '/data', containers: ['app'] }],
      skipped_mounts: [{ type: 'bind', destination: '/host', container: 'app' }],
      excluded: 2,
    });
    const bytes = readFileSync(archive?.path ?? '');
    expect(archive?.size_bytes).toBe(bytes.length);
    expect(archive?.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(archivedFiles(archive?.path ?? '')).toEqual({ 'fleetmesh-volumes/app-data/notes.txt': 'keep me' });

    const helperActions = engine.events.filter((event) => event.Actor.Attributes['fleetmesh.helper'] === 'backup').map((event) => event.Action);
    expect(helperActions).toEqual(['create', 'destroy']);
    expect([...engine.containers.values()].map((c) => c.name)).toEqual(['app']);

    const listed = await calls.call(backupList, { container: 'app' });
    expect(listed.payload?.backups.map((b) => b.archive)).toEqual([archive?.archive]);
  });

  it("restores an archive's files, never over a running container's volume nor one that binds a host directory, and makes a missing volume anew", async () => {
    const engine = engineWithApp();
    const calls = backupsOn(engine);
    const archive = (await calls.call(backupCreate, { container: 'app' })).payload?.archive ?? '';

    const busy = await calls.call(backupRestore, { archive });
    expect(busy.errors).toEqual([expect.objectContaining({ code: 'conflict', message: expect.stringContaining('in use by running app') })]);

    engine.exit(engine.container('app'), 0);
    engine.volumes.get('app-data')?.files.set('notes.txt', Buffer.from('changed since'));
    const restored = await calls.call(backupRestore, { archive });
    expect(restored.payload).toMatchObject({ volumes: [{ name: 'app-data', created: false }], checksum_ok: true });
    expect(engine.volumes.get('app-data')?.files.get('notes.txt')?.toString()).toBe('keep me');

    await engine.client.getContainer('app').remove();
    engine.volumes.delete('app-data');
    const anew = await calls.call(backupRestore, { archive });
    expect(anew.payload?.volumes).toEqual([{ name: 'app-data', created: true }]);
    expect(engine.volumes.get('app-data')?.labels).toEqual({ 'fleetmesh.restored-from': archive });

    engine.volumes.get('app-data')!.options = { type: 'none', o: 'bind', device: '/srv/data' };
    const binding = await calls.call(backupRestore, { archive });
    expect(binding.errors).toEqual([expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('binds a host directory') })]);
  });

  it('drills an archive: starts the app on throwaway volumes, passes on its health check, and removes what it made', async () => {
    const engine = engineWithApp();
    const calls = backupsOn(engine);
    const archive = (await calls.call(backupCreate, { container: 'app' })).payload?.archive ?? '';
    const before = engine.events.length;

    const drill = await calls.call(backupDrill, { archive });
    expect(drill.payload).toMatchObject({
      passed: true,
      checksum_ok: true,
      apps: [{ container: 'app', image: 'app:1', check: 'healthcheck', passed: true, detail: 'healthy' }],
      issues: [],
    });
    const created = engine.events
      .slice(before)
      .filter((event) => event.Action === 'create' && event.Actor.Attributes['fleetmesh.drill'])
      .map((event) => event.Actor.Attributes.name);
    expect(created).toEqual([expect.stringMatching(/^fleetmesh-drill-[0-9a-f]{8}-app$/)]);
    expect([...engine.containers.values()].map((c) => c.name)).toEqual(['app']);
    expect([...engine.volumes.keys()]).toEqual(['app-data']);
  });

  it('fails a drill and refuses a restore of an archive that no longer matches its checksum', async () => {
    const engine = engineWithApp();
    const calls = backupsOn(engine);
    const archive = (await calls.call(backupCreate, { container: 'app' })).payload;
    appendFileSync(archive?.path ?? '', 'x');

    const drill = await calls.call(backupDrill, { archive: archive?.archive ?? '' });
    expect(drill.payload).toMatchObject({ passed: false, checksum_ok: false, issues: [expect.stringContaining('SHA-256')] });
    engine.exit(engine.container('app'), 0);
    const restore = await calls.call(backupRestore, { archive: archive?.archive ?? '' });
    expect(restore.errors).toEqual([expect.objectContaining({ code: 'conflict', hint: expect.stringContaining('Nothing was restored') })]);
  });

  it("sweeps at start what this agent left from a call it died in, and nothing of another agent's", async () => {
    const engine = engineWithApp();
    engine.addContainer('fleetmesh-helper-dead', { state: 'created', labels: { 'fleetmesh.helper': 'backup', 'fleetmesh.owner': 'h1' } });
    engine.addContainer('fleetmesh-drill-dead', { labels: { 'fleetmesh.drill': 'dead', 'fleetmesh.owner': 'h1' } });
    engine.addContainer('fleetmesh-drill-other', { labels: { 'fleetmesh.drill': 'other', 'fleetmesh.owner': 'h2' } });
    engine.addVolume('fleetmesh-drill-dead-0', { labels: { 'fleetmesh.drill': 'dead', 'fleetmesh.owner': 'h1' } });
    engine.addVolume('fleetmesh-drill-other-0', { labels: { 'fleetmesh.drill': 'other', 'fleetmesh.owner': 'h2' } });
    const calls = backupsOn(engine);
    await calls.collector.start();

    await waitFor(() => !engine.volumes.has('fleetmesh-drill-dead-0'));
    expect([...engine.containers.values()].map((c) => c.name).sort()).toEqual(['app', 'fleetmesh-drill-other']);
    expect([...engine.volumes.keys()].sort()).toEqual(['app-data', 'fleetmesh-drill-other-0']);
  });

  it('lists archives while the engine is away, and answers collector_unavailable for what needs it', async () => {
    const engine = engineWithApp();
    const calls = backupsOn(engine);
    const archive = (await calls.call(backupCreate, { container: 'app' })).payload?.archive;
    engine.stopEngine();

    expect((await calls.call(backupList, {})).payload?.backups.map((b) => b.archive)).toEqual([archive]);
    const refused = await calls.call(backupCreate, { container: 'app' });
    expect(refused.errors).toEqual([expect.objectContaining({ code: 'collector_unavailable', collector: 'backup' })]);
  });
});
