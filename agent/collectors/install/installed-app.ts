import type { ContainerInfo } from 'dockerode';
import { APP_LABEL, type InstallApi } from './install-engine.ts';

/** The container install_app made for an app, in whatever state, if there is one. */
export async function installedContainer(docker: InstallApi, app: string): Promise<ContainerInfo | undefined> {
  const [found] = await docker.listContainers({ all: true, filters: { label: [`${APP_LABEL}=${app}`] } });
  return found;
}

/** The volumes install_app made for an app (they outlive an uninstall). */
export async function appVolumeNames(docker: InstallApi, app: string): Promise<string[]> {
  const listed = await docker.listVolumes({ filters: { label: [`${APP_LABEL}=${app}`] } });
  return (listed.Volumes ?? []).map((volume) => volume.Name).sort();
}
