import { setTimeout as delay } from 'node:timers/promises';
import type { installApp } from '../../../shared/domains/install/install-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dockerMessage, engineHas } from '../../engine/engine-errors.ts';
import type { AppDefinition } from './app-definition.ts';
import { appPorts, appVolumes, durationNs } from './app-parts.ts';
import { APP_LABEL, type InstallApi, type InstallEngine } from './install-engine.ts';
import { installedContainer } from './installed-app.ts';
import { portIssues } from './port-check.ts';

/** How often an install reads its app's state while waiting for it to be healthy. */
const POLL_MS = 250;
/** An app without a health check counts as up when it still runs this long after it started. */
const STAYS_UP_MS = 2000;
/** How long the pull of an app's missing image may take. */
const PULL_TIMEOUT_MS = 300_000;

const hasImage = (docker: InstallApi, image: string): Promise<boolean> => engineHas(() => docker.getImage(image).inspect());

const nameTaken = (docker: InstallApi, name: string): Promise<boolean> => engineHas(() => docker.getContainer(name).inspect());

function healthcheckOf(app: AppDefinition) {
  const check = app.healthcheck;
  if (!check) return {};
  return {
    Healthcheck: {
      Test: check.test,
      ...(check.interval ? { Interval: durationNs(check.interval) } : {}),
      ...(check.timeout ? { Timeout: durationNs(check.timeout) } : {}),
      ...(check.retries ? { Retries: check.retries } : {}),
      ...(check.start_period ? { StartPeriod: durationNs(check.start_period) } : {}),
    },
  };
}

/**
 * install_app: every refusal is found before anything is made (the ports
 * free, the name unused), then a missing image is pulled with the host's own
 * registry login, the volumes and the container are created and the call
 * waits for the app's health check.
 */
export function registerInstallApp(dispatcher: Dispatcher, install: InstallEngine): void {
  const docker = install.engine.docker;
  dispatcher.register<typeof installApp>('install.app', (params, context) =>
    install.engine.run(async () => {
      const startedMs = Date.now();
      const { app } = await install.catalog.get(params.app);
      const ports = appPorts(app).map((port, i) => (i === 0 && params.port !== undefined ? { ...port, host_port: params.port } : port));
      const volumes = appVolumes(app);
      const answer = (status: 'installed' | 'already_installed' | 'failed', health: string | null, issues: string[]) => ({
        payload: {
          app: app.name,
          status,
          container: app.name,
          image: app.image,
          ports,
          volumes: volumes.map((volume) => volume.volume),
          health,
          issues,
          duration_ms: Date.now() - startedMs,
        },
      });

      const existing = await installedContainer(docker, app.name);
      if (existing) return answer('already_installed', null, existing.State === 'running' ? [] : [`its container is ${existing.State}`]);
      const issues: string[] = [];
      if (await nameTaken(docker, app.name)) issues.push(`a container named ${app.name} exists and was not installed by fleetmesh`);
      issues.push(...(await portIssues(docker, ports)));
      const imagePresent = await hasImage(docker, app.image);
      if (issues.length > 0) {
        if (!imagePresent) issues.unshift(`image ${app.image} is not on this host: it is pulled once nothing else stands in the way`);
        return answer('failed', null, issues);
      }
      if (!imagePresent) {
        context.emit({ phase: 'pulling', app: app.name });
        try {
          const signal = AbortSignal.any([context.signal, AbortSignal.timeout(PULL_TIMEOUT_MS)]);
          await install.puller.pull(app.image, { signal, onProgress: (progress) => context.emit({ phase: 'pulling', app: app.name, ...progress }) });
        } catch (error) {
          if (!(error instanceof FleetError)) throw error;
          return answer('failed', null, [`image ${app.image} is not on this host and could not be pulled: ${error.message} (${error.hint})`]);
        }
      }

      context.emit({ phase: 'creating', app: app.name });
      for (const volume of volumes) {
        await docker.createVolume({ Name: volume.volume, Labels: { [APP_LABEL]: app.name } });
      }
      const container = await docker.createContainer({
        name: app.name,
        Image: app.image,
        ...(app.command ? { Cmd: app.command } : {}),
        ...(app.entrypoint ? { Entrypoint: app.entrypoint } : {}),
        Env: Object.entries(app.environment).map(([key, value]) => `${key}=${value}`),
        Labels: { [APP_LABEL]: app.name },
        ...healthcheckOf(app),
        ExposedPorts: Object.fromEntries(ports.map((port) => [`${port.container_port}/${port.protocol}`, {}])),
        HostConfig: {
          RestartPolicy: { Name: app.restart === 'no' ? '' : app.restart },
          PortBindings: Object.fromEntries(ports.map((port) => [`${port.container_port}/${port.protocol}`, [{ HostPort: String(port.host_port) }]])),
          Mounts: volumes.map((volume) => ({ Type: 'volume' as const, Source: volume.volume, Target: volume.path })),
        },
      });
      try {
        await container.start();
      } catch (error) {
        return answer('failed', null, [`the engine could not start it: ${dockerMessage(error)} (install_uninstall removes what was made)`]);
      }
      context.emit({ phase: 'waiting', app: app.name });
      const signal = AbortSignal.any([context.signal, AbortSignal.timeout((params.timeout_s ?? 60) * 1000)]);
      const runningSinceMs = Date.now();
      for (;;) {
        const info = await container.inspect();
        const health = info.State.Health?.Status ?? null;
        if (!info.State.Running && info.State.Status !== 'restarting') {
          return answer('failed', health, [`it exited with code ${info.State.ExitCode}: docker_logs name=${app.name} shows why`]);
        }
        if (health === 'healthy' || (health === null && info.State.Running && Date.now() - runningSinceMs >= STAYS_UP_MS)) {
          return answer('installed', health, []);
        }
        if (health === 'unhealthy') return answer('failed', health, [`its health check fails: docker_logs name=${app.name} shows why`]);
        if (signal.aborted) return answer('failed', health, [`not healthy within ${params.timeout_s ?? 60} s (still ${health ?? info.State.Status})`]);
        await delay(POLL_MS, undefined, { signal }).catch(() => undefined);
      }
    }),
  );
}
