import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type Docker from 'dockerode';
import type { backupDrill } from '../../../shared/domains/backup/backup-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dockerMessage } from '../../engine/engine-errors.ts';
import { restoreArchive } from './archive-restore.ts';
import { type BackupApi, type BackupEngine, workSignal } from './backup-engine.ts';
import { type AppRecord, checksumMatches } from './backup-store.ts';
import { OWNER_LABEL } from './volume-helper.ts';

/** How often a drill reads its app's state while waiting for a verdict. */
const POLL_MS = 250;
/** An app without a health check passes when it is still running this long after it started. */
const STAYS_UP_MS = 3000;

interface AppVerdict {
  container: string;
  image: string;
  check: 'healthcheck' | 'running';
  passed: boolean;
  detail: string;
}

/** The environment of the live container the archive came from, when it is still there: a drill runs the app as it runs. */
async function liveEnv(docker: BackupApi, name: string): Promise<string[]> {
  try {
    return (await docker.getContainer(name).inspect()).Config.Env ?? [];
  } catch {
    return [];
  }
}

/** Starts one app on the throwaway volumes (no network, no ports) and waits for its health check's verdict. */
async function checkApp(
  docker: BackupApi,
  owner: string,
  app: AppRecord,
  volumes: ReadonlyMap<string, string>,
  token: string,
  signal: AbortSignal,
  started: Docker.Container[],
): Promise<AppVerdict> {
  const healthcheck = app.healthcheck && (app.healthcheck.Test?.length ?? 0) > 0 ? app.healthcheck : undefined;
  const container = await docker.createContainer({
    name: `fleetmesh-drill-${token}-${app.container}`.slice(0, 120),
    Image: app.image_id,
    ...(app.cmd ? { Cmd: app.cmd } : {}),
    ...(app.entrypoint ? { Entrypoint: app.entrypoint } : {}),
    WorkingDir: app.working_dir,
    User: app.user,
    Env: await liveEnv(docker, app.container),
    Labels: { 'fleetmesh.drill': token, [OWNER_LABEL]: owner },
    ...(healthcheck ? { Healthcheck: healthcheck } : {}),
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      Mounts: app.mounts.map((mount) => ({ Type: 'volume', Source: volumes.get(mount.volume) ?? mount.volume, Target: mount.destination })),
    },
  });
  started.push(container);
  const configured = (await container.inspect()).Config.Healthcheck?.Test ?? [];
  const check = configured.length > 0 && configured[0] !== 'NONE' ? 'healthcheck' : 'running';
  const base = { container: app.container, image: app.image, check } as const;
  await container.start();
  const startedMs = Date.now();
  for (;;) {
    const info = await container.inspect();
    if (!info.State.Running) return { ...base, passed: false, detail: `exited with code ${info.State.ExitCode}` };
    const health = info.State.Health;
    if (check === 'healthcheck' && health?.Status === 'healthy') return { ...base, passed: true, detail: 'healthy' };
    if (check === 'healthcheck' && health?.Status === 'unhealthy') {
      const last = health.Log?.at(-1)?.Output?.trim() ?? '';
      return { ...base, passed: false, detail: `unhealthy${last ? `: ${last.slice(0, 200)}` : ''}` };
    }
    if (check === 'running' && Date.now() - startedMs >= STAYS_UP_MS) return { ...base, passed: true, detail: `running after ${STAYS_UP_MS} ms` };
    if (signal.aborted) return { ...base, passed: false, detail: `no verdict before the timeout (${health?.Status ?? 'running'})` };
    await delay(POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}

/**
 * backup_drill: verify the checksum, unpack into throwaway volumes, start
 * each app that used them on those volumes and wait for its health check;
 * everything the drill made is removed before it answers.
 */
export function registerBackupDrill(dispatcher: Dispatcher, backup: BackupEngine): void {
  const docker = backup.engine.docker;
  dispatcher.register<typeof backupDrill>('backup.drill', (params, context) =>
    backup.engine.run(async () => {
      const startedMs = Date.now();
      const { manifest, path } = await backup.store.find(params.archive);
      // The apps get what is left of the call's time once the archive is in place; leave a little for cleanup.
      const signal = workSignal(context, params.timeout_s ? params.timeout_s - 3 : undefined, 117);
      const checksumOk = await checksumMatches(path, manifest.sha256);
      const verifiedMs = Date.now();
      const timings = { verify_ms: verifiedMs - startedMs, restore_ms: 0, health_ms: 0, cleanup_ms: 0, total_ms: 0 };
      const issues: string[] = [];
      const apps: AppVerdict[] = [];
      if (!checksumOk) issues.push('the archive does not match its recorded SHA-256');
      const token = randomBytes(4).toString('hex');
      const volumes = new Map(manifest.volumes.map((volume, i) => [volume.name, `fleetmesh-drill-${token}-${i}`]));
      const started: Docker.Container[] = [];
      try {
        if (checksumOk) {
          context.emit({ phase: 'restoring', volumes: volumes.size });
          for (const name of volumes.values()) await docker.createVolume({ Name: name, Labels: { 'fleetmesh.drill': token, [OWNER_LABEL]: backup.owner } });
          await restoreArchive(docker, backup.owner, manifest, path, volumes, signal);
          const restoredMs = Date.now();
          timings.restore_ms = restoredMs - verifiedMs;
          context.emit({ phase: 'health_check', apps: manifest.apps.length });
          for (const app of manifest.apps) {
            try {
              apps.push(await checkApp(docker, backup.owner, app, volumes, token, signal, started));
            } catch (error) {
              apps.push({ container: app.container, image: app.image, check: 'running', passed: false, detail: `could not start: ${dockerMessage(error)}` });
            }
          }
          timings.health_ms = Date.now() - restoredMs;
          for (const app of apps) if (!app.passed) issues.push(`${app.container}: ${app.detail}`);
          if (apps.length === 0) issues.push('the archive records no app to start');
        }
      } catch (error) {
        issues.push(`restore failed: ${dockerMessage(error)}`);
      } finally {
        const cleanupMs = Date.now();
        await Promise.all(started.map((container) => container.remove({ force: true }).catch(() => undefined)));
        await Promise.all(
          [...volumes.values()].map((name) =>
            docker
              .getVolume(name)
              .remove()
              .catch(() => undefined),
          ),
        );
        timings.cleanup_ms = Date.now() - cleanupMs;
      }
      timings.total_ms = Date.now() - startedMs;
      const passed = issues.length === 0;
      return { payload: { archive: manifest.archive, passed, status: passed ? 'passed' : 'failed', checksum_ok: checksumOk, apps, timings, issues } };
    }),
  );
}
