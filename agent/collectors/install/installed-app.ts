import type { ContainerInfo } from 'dockerode';
import type { EngineApi } from '../docker/engine-access.ts';
import { APP_LABEL } from './install-engine.ts';

/** The container install_app made for an app, in whatever state, if there is one. */
export async function installedContainer(docker: EngineApi, app: string): Promise<ContainerInfo | undefined> {
  const [found] = await docker.listContainers({ all: true, filters: { label: [`${APP_LABEL}=${app}`] } });
  return found;
}

/** The volumes install_app made for an app (they outlive an uninstall). */
export async function appVolumeNames(docker: EngineApi, app: string): Promise<string[]> {
  const listed = await docker.listVolumes({ filters: { label: [`${APP_LABEL}=${app}`] } });
  return (listed.Volumes ?? []).map((volume) => volume.Name).sort();
}
