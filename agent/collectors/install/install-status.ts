import type { ContainerInfo } from 'dockerode';
import type { installStatus } from '../../../shared/domains/install/install-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { APP_LABEL, type InstallEngine } from './install-engine.ts';

function healthOf(container: ContainerInfo): string | null {
  const match = /\((healthy|unhealthy|health: starting)\)/.exec(container.Status);
  if (!match) return null;
  return match[1] === 'health: starting' ? 'starting' : (match[1] as string);
}

/** Each published port once (the engine lists one per address family). */
function publishedPorts(container: ContainerInfo) {
  const seen = new Map<string, { host_port: number; container_port: number; protocol: 'tcp' | 'udp' }>();
  for (const port of container.Ports) {
    if (!port.PublicPort) continue;
    const protocol = port.Type === 'udp' ? 'udp' : 'tcp';
    seen.set(`${port.PublicPort}/${protocol}`, { host_port: port.PublicPort, container_port: port.PrivatePort, protocol });
  }
  return [...seen.values()];
}

/** install_status: the apps installed here, and the ones uninstalled whose volumes remain. */
export function registerInstallStatus(dispatcher: Dispatcher, install: InstallEngine): void {
  const docker = install.engine.docker;
  dispatcher.register<typeof installStatus>('install.status', (params) =>
    install.engine.run(async () => {
      const filter = params.app === undefined ? APP_LABEL : `${APP_LABEL}=${params.app}`;
      const [containers, listed] = await Promise.all([
        docker.listContainers({ all: true, filters: { label: [filter] } }),
        docker.listVolumes({ filters: { label: [filter] } }),
      ]);
      const volumesOf = new Map<string, string[]>();
      for (const volume of listed.Volumes ?? []) {
        const app = volume.Labels?.[APP_LABEL];
        if (app) volumesOf.set(app, [...(volumesOf.get(app) ?? []), volume.Name].sort());
      }
      const apps = containers.map((container) => {
        const app = container.Labels[APP_LABEL] as string;
        const mounted = container.Mounts.filter((mount) => mount.Type === 'volume' && mount.Name).map((mount) => mount.Name as string);
        const present = new Set(volumesOf.get(app) ?? []);
        volumesOf.delete(app);
        return {
          app,
          container: (container.Names[0] ?? container.Id).replace(/^\//, ''),
          image: container.Image,
          state: container.State,
          health: healthOf(container),
          ports: publishedPorts(container),
          volumes: mounted.sort().map((name) => ({ name, exists: present.has(name) })),
          installed: true,
        };
      });
      for (const [app, names] of volumesOf) {
        apps.push({
          app,
          container: '',
          image: '',
          state: 'uninstalled',
          health: null,
          ports: [],
          volumes: names.map((name) => ({ name, exists: true })),
          installed: false,
        });
      }
      apps.sort((a, b) => a.app.localeCompare(b.app));
      return { payload: { apps, count: apps.length } };
    }),
  );
}
