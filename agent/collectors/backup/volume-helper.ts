import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { BackupApi } from './backup-engine.ts';
import { VOLUMES_ROOT } from './backup-store.ts';

/** Marks what a backup makes for a moment (helpers, drill containers and volumes) with the agent's name, so it can sweep up after a crash. */
export const OWNER_LABEL = 'fleetmesh.owner';

/** The first of these images the engine has, else any image it has: a helper is never started, so any image will do. */
export async function helperImage(docker: BackupApi, preferred: readonly string[]): Promise<string> {
  for (const image of preferred) {
    try {
      await docker.getImage(image).inspect();
      return image;
    } catch {
      // not here: try the next
    }
  }
  const [any] = await docker.listImages();
  if (!any) throw new FleetError('collector_failed', 'the engine has no image to mount volumes with', { collector: 'backup' });
  return any.Id;
}

/**
 * Runs `work` with a container that mounts each volume at /fleetmesh-volumes/NAME
 * and is never started: the engine's archive endpoint reads and writes a stopped
 * container's volumes, so no tar (nor any program) is needed in the image.
 * The container is removed afterwards, whatever happened.
 */
export async function withVolumeHelper<T>(
  docker: BackupApi,
  owner: string,
  image: string,
  mounts: readonly { volume: string; name: string }[],
  readOnly: boolean,
  work: (helper: Docker.Container) => Promise<T>,
): Promise<T> {
  const helper = await docker.createContainer({
    name: `fleetmesh-helper-${randomBytes(4).toString('hex')}`,
    Image: image,
    Entrypoint: ['/nonexistent'],
    Labels: { 'fleetmesh.helper': 'backup', [OWNER_LABEL]: owner },
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      Mounts: mounts.map((mount) => ({ Type: 'volume', Source: mount.volume, Target: `/${VOLUMES_ROOT}/${mount.name}`, ReadOnly: readOnly })),
    },
  });
  try {
    return await work(helper);
  } finally {
    await helper.remove({ force: true, v: false }).catch(() => undefined);
  }
}
