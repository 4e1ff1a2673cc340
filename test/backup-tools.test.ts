import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CliProcess } from './harness/cli-process.ts';
import { removeContainers, testDocker } from './harness/containers.ts';
import { call, identityToken, mcpClient } from './harness/mcp-client.ts';
import { makeTempDir } from './harness/temp-dir.ts';
import { startTestFleet, type TestFleet } from './harness/test-fleet.ts';
import { waitFor } from './harness/wait.ts';

const VOLUME = 'fm-bk-data';
const BOUND = 'fm-bk-bound';
const CONTAINERS = ['fm-bk-app', 'fm-bk-seed', 'fm-bk-change', 'fm-bk-read', 'fm-bk-bound-app', 'fm-bk-proj-db', 'fm-bk-proj-web'];
const PROJECT_VOLUMES = ['fm-bk-proj-db', 'fm-bk-proj-shared'];

interface Backup {
  archive: string;
  path: string;
  sha256: string;
  size_bytes: number;
  [key: string]: unknown;
}

/** Runs a one-off busybox command with the volume at /data and answers what it printed. */
async function inVolume(docker: Docker, name: string, script: string): Promise<string> {
  const container = await docker.createContainer({
    name,
    Image: inject('testImage'),
    Cmd: ['sh', '-c', script],
    Tty: true,
    HostConfig: { Mounts: [{ Type: 'volume', Source: VOLUME, Target: '/data' }] },
  });
  await container.start();
  await container.wait();
  const output = (await container.logs({ stdout: true, stderr: true })).toString('utf8');
  await container.remove({ force: true });
  return output.replace(/\r/g, '').trim();
}

/** Whatever drills and helpers left on the engine (there should be nothing). */
async function leftovers(docker: Docker): Promise<string[]> {
  const containers = await docker.listContainers({ all: true, filters: { label: ['fleetmesh.drill', 'fleetmesh.helper'] } });
  const drillContainers = await docker.listContainers({ all: true, filters: { label: ['fleetmesh.drill'] } });
  const volumes = (await docker.listVolumes({ filters: { label: ['fleetmesh.drill'] } })).Volumes ?? [];
  return [...containers, ...drillContainers].map((c) => c.Names[0] ?? c.Id).concat(volumes.map((v) => v.Name));
}

describe('backup tools against the real engine', () => {
  let fleet: TestFleet;
  let docker: Docker;
  let client: Client;
  const temp = makeTempDir();
  const backupDir = join(temp.path, 'backups');
  const processes: CliProcess[] = [];

  beforeAll(async () => {
    docker = testDocker();
    await removeContainers(docker, CONTAINERS);
    await Promise.all(
      [VOLUME, BOUND, ...PROJECT_VOLUMES].map((name) =>
        docker
          .getVolume(name)
          .remove()
          .catch(() => undefined),
      ),
    );
    await docker.createVolume({ Name: VOLUME });
    execFileSync('mkdir', ['-p', join(temp.path, 'bound'), join(temp.path, 'hostdir')]);
    await docker.createVolume({ Name: BOUND, DriverOpts: { type: 'none', o: 'bind', device: join(temp.path, 'bound') } });
    await inVolume(
      docker,
      'fm-bk-seed',
      'mkdir -p /data/sub /data/cache && echo hello > /data/greeting.txt && echo deep > /data/sub/file && echo junk > /data/cache/junk',
    );
    // A web app serving the volume: its health check passes only while the volume holds greeting.txt.
    const app = await docker.createContainer({
      name: 'fm-bk-app',
      Image: inject('testImage'),
      Cmd: ['httpd', '-f', '-p', '80', '-h', '/data'],
      Healthcheck: { Test: ['CMD-SHELL', 'wget -q -O /dev/null http://127.0.0.1/greeting.txt || exit 1'], Interval: 1_000_000_000, Retries: 3 },
      HostConfig: {
        Mounts: [
          { Type: 'volume', Source: VOLUME, Target: '/data' },
          { Type: 'bind', Source: join(temp.path, 'hostdir'), Target: '/host' },
        ],
      },
    });
    await app.start();
    await docker.createContainer({
      name: 'fm-bk-bound-app',
      Image: inject('testImage'),
      Cmd: ['sleep', '3600'],
      HostConfig: { Mounts: [{ Type: 'volume', Source: BOUND, Target: '/bound' }] },
    });
    fleet = await startTestFleet({ operationsLevel: 3 });
    await fleet.addAgent('backup-host', { collectors: 'default', dockerAddress: inject('dockerHost'), backupDir });
    await fleet.addAgent('no-engine', { collectors: 'default', dockerAddress: '/nonexistent/docker.sock', backupDir: join(temp.path, 'other') });
    client = await mcpClient(fleet.broker, await identityToken(fleet.broker, 3));
  });
  afterAll(async () => {
    for (const child of processes) child.signal('SIGKILL');
    await client?.close();
    await fleet?.stop();
    await removeContainers(docker, CONTAINERS);
    // The agent killed mid-drill leaves its drill's containers and volumes behind.
    for (const label of ['fleetmesh.drill', 'fleetmesh.helper']) {
      for (const container of await docker.listContainers({ all: true, filters: { label: [label] } })) {
        await docker.getContainer(container.Id).remove({ force: true });
      }
    }
    for (const volume of (await docker.listVolumes({ filters: { label: ['fleetmesh.drill'] } })).Volumes ?? []) {
      await docker.getVolume(volume.Name).remove();
    }
    await Promise.all(
      [VOLUME, BOUND, ...PROJECT_VOLUMES].map((name) =>
        docker
          .getVolume(name)
          .remove()
          .catch(() => undefined),
      ),
    );
    temp.remove();
  });

  let archive: Backup;

  it('archives a container’s named volumes with size and checksum, skipping bind mounts and excluded paths', async () => {
    const result = await call(client, 'backup_create', { host: 'backup-host', container: 'fm-bk-app', exclude: ['cache'] });
    expect(result.isError).toBeFalsy();
    archive = result.structuredContent as unknown as Backup;
    expect(archive).toMatchObject({
      source: 'fm-bk-app',
      source_kind: 'container',
      volumes: [{ name: VOLUME, destination: '/data', containers: ['fm-bk-app'] }],
      skipped_mounts: [{ type: 'bind', destination: '/host', container: 'fm-bk-app' }],
    });
    expect(archive.excluded).toBe(2);
    expect(archive.path.startsWith(backupDir)).toBe(true);
    expect(archive.size_bytes).toBe(readFileSync(archive.path).length);
    expect(archive.sha256).toBe(createHash('sha256').update(readFileSync(archive.path)).digest('hex'));
    // The manifest beside it is what backup_list and doctor read.
    expect(existsSync(join(backupDir, `${archive.archive}.json`))).toBe(true);
    const entries = execFileSync('tar', ['-tzf', archive.path]).toString().split('\n');
    expect(entries).toEqual(expect.arrayContaining([`fleetmesh-volumes/${VOLUME}/greeting.txt`, `fleetmesh-volumes/${VOLUME}/sub/file`]));
    expect(entries.some((entry) => entry.includes('cache'))).toBe(false);
    expect(await leftovers(docker)).toEqual([]);
  });

  it('lists the archives fleet-wide, each host its own backup directory', async () => {
    const result = await call(client, 'backup_list');
    const hosts = (result.structuredContent as { hosts: { host: string; backups?: Backup[]; backup_dir?: string }[] }).hosts;
    const engine = hosts.find((h) => h.host === 'backup-host');
    expect(engine?.backup_dir).toBe(backupDir);
    expect(engine?.backups?.map((b) => b.archive)).toEqual([archive.archive]);
    expect(engine?.backups?.[0]).toMatchObject({ sha256: archive.sha256, size_bytes: archive.size_bytes, source: 'fm-bk-app' });
    // A host without an engine makes no backups: its collector is absent, the host left out and named once.
    expect(hosts.find((h) => h.host === 'no-engine')).toBeUndefined();
    expect(result.structuredContent.absent_collectors).toEqual([{ collector: 'backup', hosts: ['no-engine'] }]);
  });

  it('drills an archive: restores it into throwaway volumes, passes the app’s health check and removes everything', async () => {
    const result = await call(client, 'backup_drill', { host: 'backup-host', archive: archive.archive });
    expect(result.isError).toBeFalsy();
    const drill = result.structuredContent as Record<string, unknown> & { timings: { restore_ms: number; health_ms: number; total_ms: number } };
    expect(drill).toMatchObject({
      archive: archive.archive,
      passed: true,
      status: 'passed',
      checksum_ok: true,
      apps: [{ container: 'fm-bk-app', check: 'healthcheck', passed: true, detail: 'healthy' }],
      issues: [],
    });
    expect(drill.timings.total_ms).toBeGreaterThanOrEqual(drill.timings.restore_ms + drill.timings.health_ms);
    expect(await leftovers(docker)).toEqual([]);
  });

  it('fails a drill whose archive was damaged, naming the checksum', async () => {
    const copy = await call(client, 'backup_create', { host: 'backup-host', container: 'fm-bk-app', to: 'damaged' });
    const damaged = copy.structuredContent as unknown as Backup;
    expect(damaged.path.startsWith(join(backupDir, 'damaged'))).toBe(true);
    execFileSync('sh', ['-c', `printf x >> '${damaged.path}'`]);
    const result = await call(client, 'backup_drill', { host: 'backup-host', archive: damaged.archive });
    expect(result.structuredContent).toMatchObject({ passed: false, status: 'failed', checksum_ok: false, issues: [expect.stringContaining('SHA-256')] });
    const outside = await call(client, 'backup_create', { host: 'backup-host', container: 'fm-bk-app', to: '../elsewhere' });
    expect(outside.isError).toBe(true);
    expect(JSON.stringify(outside.structuredContent)).toContain('outside the backup directory');
  });

  it('restores only with confirm, never over a running container’s volume, and brings back the archived files', async () => {
    const unconfirmed = await call(client, 'backup_restore', { host: 'backup-host', archive: archive.archive });
    expect(unconfirmed.isError).toBe(true);
    expect(JSON.stringify(unconfirmed.structuredContent)).toContain('confirm_required');

    const busy = await call(client, 'backup_restore', { host: 'backup-host', archive: archive.archive, confirm: true });
    expect(busy.isError).toBe(true);
    expect(busy.structuredContent).toMatchObject({ errors: [{ code: 'conflict' }] });
    expect(JSON.stringify(busy.structuredContent)).toContain('fm-bk-app');

    await inVolume(docker, 'fm-bk-change', 'echo changed > /data/greeting.txt && rm -rf /data/sub');
    await docker.getContainer('fm-bk-app').stop({ t: 1 });
    const restored = await call(client, 'backup_restore', { host: 'backup-host', archive: archive.archive, confirm: true });
    expect(restored.isError).toBeFalsy();
    expect(restored.structuredContent).toMatchObject({ archive: archive.archive, volumes: [{ name: VOLUME, created: false }], checksum_ok: true });
    expect(await inVolume(docker, 'fm-bk-read', 'cat /data/greeting.txt /data/sub/file')).toBe('hello\ndeep');

    // A volume that is gone is made again.
    await docker.getContainer('fm-bk-app').remove({ force: true });
    await docker.getVolume(VOLUME).remove();
    const recreated = await call(client, 'backup_restore', { host: 'backup-host', archive: archive.archive, confirm: true });
    expect(recreated.structuredContent).toMatchObject({ volumes: [{ name: VOLUME, created: true }] });
    expect(await inVolume(docker, 'fm-bk-read', 'cat /data/greeting.txt; ls -1 /data')).toBe('hello\ngreeting.txt\nsub');
  });

  it('refuses to restore into a volume that binds a host directory', async () => {
    const made = await call(client, 'backup_create', { host: 'backup-host', container: 'fm-bk-bound-app' });
    const bound = made.structuredContent as unknown as Backup;
    const result = await call(client, 'backup_restore', { host: 'backup-host', archive: bound.archive, confirm: true });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ errors: [{ code: 'invalid_argument', message: expect.stringContaining('binds a host directory') }] });
  });

  it('archives every named volume of a compose project once, and drills its apps that have no health check by keeping them running', async () => {
    const project = { 'com.docker.compose.project': 'fm-bk-proj' };
    for (const [name, mounts] of [
      ['fm-bk-proj-db', [{ Type: 'volume' as const, Source: 'fm-bk-proj-db', Target: '/db' }]],
      ['fm-bk-proj-web', []],
    ] as const) {
      await docker.createContainer({
        name,
        Image: inject('testImage'),
        Cmd: ['sleep', '3600'],
        Labels: project,
        HostConfig: { Mounts: [...mounts, { Type: 'volume', Source: 'fm-bk-proj-shared', Target: '/shared' }] },
      });
    }
    const made = await call(client, 'backup_create', { host: 'backup-host', project: 'fm-bk-proj' });
    expect(made.structuredContent).toMatchObject({
      source: 'fm-bk-proj',
      source_kind: 'project',
      volumes: [
        { name: 'fm-bk-proj-db', destination: '/db', containers: ['fm-bk-proj-db'] },
        { name: 'fm-bk-proj-shared', destination: '/shared', containers: ['fm-bk-proj-db', 'fm-bk-proj-web'] },
      ],
    });
    const listed = await call(client, 'backup_list', { host: 'backup-host', project: 'fm-bk-proj' });
    expect((listed.structuredContent.backups as Backup[]).map((b) => b.archive)).toEqual([made.structuredContent.archive]);
    const drill = await call(client, 'backup_drill', { host: 'backup-host', archive: made.structuredContent.archive });
    expect(drill.structuredContent).toMatchObject({
      passed: true,
      apps: [
        { container: 'fm-bk-proj-db', check: 'running', passed: true },
        { container: 'fm-bk-proj-web', check: 'running', passed: true },
      ],
    });
    expect(await leftovers(docker)).toEqual([]);
  });

  it('drills on several hosts at once, reports the one that dies mid-call, and that agent sweeps up its drill when it is back', async () => {
    const agentFlags = ['--docker-socket', inject('dockerHost'), '--backup-dir', backupDir];
    const doomed = new CliProcess([...(await fleet.agentArgs('doomed')), ...agentFlags]);
    processes.push(doomed);
    await waitFor(() => fleet.broker.registry.find('doomed')?.state === 'online', { what: 'doomed online' });
    const fresh = (await call(client, 'backup_create', { host: 'backup-host', project: 'none-such' })).structuredContent;
    expect(fresh).toMatchObject({ errors: [{ code: 'not_found' }] });
    // The app is gone by now: the archive's image id still starts the drill.
    const pending = call(client, 'backup_drill', { hosts: ['backup-host', 'doomed'], archive: archive.archive });
    const doomedDrill = async () => (await docker.listVolumes({ filters: { label: ['fleetmesh.owner=doomed'] } })).Volumes ?? [];
    await waitFor(async () => (await doomedDrill()).length > 0, { what: "doomed's drill volumes" });
    doomed.signal('SIGKILL');
    const result = await pending;
    const hosts = (result.structuredContent as { hosts: { host: string; availability: string; passed?: boolean; errors: { code: string }[] }[] }).hosts;
    expect(hosts.find((h) => h.host === 'backup-host')).toMatchObject({ availability: 'available', passed: true });
    expect(hosts.find((h) => h.host === 'doomed')).toMatchObject({ availability: 'unavailable', errors: [{ code: 'agent_disconnected' }] });
    expect((await doomedDrill()).length).toBeGreaterThan(0);

    const back = new CliProcess(['agent', '--broker', fleet.address, '--data-dir', fleet.agentDir('doomed'), '--name', 'doomed', ...agentFlags]);
    processes.push(back);
    await waitFor(async () => (await doomedDrill()).length === 0, { what: "doomed's drill swept", timeoutMs: 60_000 });
    expect(await docker.listContainers({ all: true, filters: { label: ['fleetmesh.owner=doomed'] } })).toEqual([]);
  }, 120_000);
});
