import type { ContainerInfo } from 'dockerode';
import type { dockerList } from '../../../shared/domains/docker/docker-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { containerName } from '../../engine/container-directory.ts';
import { unixMs } from '../../engine/engine-time.ts';
import type { DockerEngine } from './docker-engine.ts';

function ports(info: ContainerInfo) {
  return info.Ports.map((p) => ({ private_port: p.PrivatePort, public_port: p.PublicPort ?? null, protocol: p.Type, ip: p.IP ?? null })).sort(
    (a, b) => a.private_port - b.private_port || (a.public_port ?? 0) - (b.public_port ?? 0) || (a.ip ?? '').localeCompare(b.ip ?? ''),
  );
}

/** docker_list: the host's containers, with numbers and ports. */
export function registerDockerList(dispatcher: Dispatcher, engine: DockerEngine): void {
  dispatcher.register<typeof dockerList>('docker.list', (params) =>
    engine.run(async () => {
      let containers = await engine.directory.list(params.all ?? true);
      if (params.name) containers = containers.filter((c) => containerName(c).includes(params.name as string));
      if (params.label) {
        const [key, value] = params.label.split('=', 2) as [string, string | undefined];
        containers = containers.filter((c) => Object.hasOwn(c.Labels, key) && (value === undefined || c.Labels[key] === value));
      }
      const details = await engine.directory.detailsOf(containers.map((c) => c.Id));
      const rows = containers
        .map((c) => {
          const detail = details.get(c.Id);
          return {
            id: c.Id.slice(0, 12),
            name: containerName(c),
            image: c.Image,
            state: c.State,
            status: c.Status,
            created_unix_ms: c.Created * 1000,
            started_at_unix_ms: unixMs(detail?.startedAt),
            ports: ports(c),
            health: detail?.health ?? null,
            restart_count: detail?.restartCount ?? 0,
            labels: c.Labels,
          };
        })
        .sort((a, b) => a.name.localeCompare(b.name));
      return { payload: { containers: rows, count: rows.length } };
    }),
  );
}
