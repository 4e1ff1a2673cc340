import type { ContainerInspectInfo } from 'dockerode';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { dockerStatus } from '../../engine/engine-errors.ts';
import type { BackupApi } from './backup-engine.ts';
import type { AppRecord, Manifest } from './backup-store.ts';

/** What a backup of a container or a compose project holds, and what it leaves out. */
interface BackupSource {
  source: string;
  kind: 'container' | 'project';
  volumes: Manifest['volumes'];
  apps: AppRecord[];
  skipped: { type: string; destination: string; container: string; reason: string }[];
}

const PROJECT_LABEL = 'com.docker.compose.project';

function nameOf(info: ContainerInspectInfo): string {
  return info.Name.replace(/^\//, '');
}

function appOf(info: ContainerInspectInfo): AppRecord {
  return {
    container: nameOf(info),
    image: info.Config.Image,
    image_id: info.Image,
    cmd: info.Config.Cmd ?? null,
    entrypoint: typeof info.Config.Entrypoint === 'string' ? [info.Config.Entrypoint] : (info.Config.Entrypoint ?? null),
    working_dir: info.Config.WorkingDir ?? '',
    user: info.Config.User ?? '',
    healthcheck: (info.Config.Healthcheck as AppRecord['healthcheck']) ?? null,
    mounts: info.Mounts.filter((m) => m.Type === 'volume' && m.Name).map((m) => ({ volume: m.Name as string, destination: m.Destination })),
  };
}

/** The named volumes of one container, or of every container of a compose project; other mounts are listed as skipped. */
export async function backupSource(docker: BackupApi, params: { container?: string | undefined; project?: string | undefined }): Promise<BackupSource> {
  if ((params.container === undefined) === (params.project === undefined)) {
    throw new FleetError('invalid_argument', 'name either container or project', { hint: 'backup_create backs up one container or one compose project.' });
  }
  let infos: ContainerInspectInfo[];
  if (params.container !== undefined) {
    try {
      infos = [await docker.getContainer(params.container).inspect()];
    } catch (error) {
      if (dockerStatus(error) === 404) throw new FleetError('not_found', `no container "${params.container}" on this host`);
      throw error;
    }
  } else {
    const rows = await docker.listContainers({ all: true, filters: { label: [`${PROJECT_LABEL}=${params.project}`] } });
    if (rows.length === 0) throw new FleetError('not_found', `no container of compose project "${params.project}" on this host`);
    infos = await Promise.all(rows.map((row) => docker.getContainer(row.Id).inspect()));
    infos.sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  }
  const volumes = new Map<string, Manifest['volumes'][number]>();
  const skipped: BackupSource['skipped'] = [];
  for (const info of infos) {
    for (const mount of info.Mounts) {
      if (mount.Type === 'volume' && mount.Name) {
        const known = volumes.get(mount.Name);
        if (known) known.containers.push(nameOf(info));
        else volumes.set(mount.Name, { name: mount.Name, destination: mount.Destination, containers: [nameOf(info)] });
      } else {
        const reason = mount.Type === 'bind' ? 'a bind mount: host files are backed up on the host' : `a ${mount.Type} mount holds no volume data`;
        skipped.push({ type: mount.Type, destination: mount.Destination, container: nameOf(info), reason });
      }
    }
  }
  const source = params.container ?? (params.project as string);
  if (volumes.size === 0) {
    throw new FleetError('invalid_argument', `${params.container !== undefined ? 'container' : 'project'} "${source}" has no named volume to back up`, {
      hint: 'Only named volumes are archived; bind mounts are host directories.',
    });
  }
  return {
    source: params.container !== undefined ? nameOf(infos[0] as ContainerInspectInfo) : source,
    kind: params.container !== undefined ? 'container' : 'project',
    // The engine lists a container's mounts in no fixed order.
    volumes: [...volumes.values()].sort((a, b) => a.name.localeCompare(b.name)),
    apps: infos.map(appOf).filter((app) => app.mounts.length > 0),
    skipped,
  };
}
