import type { installPurge, installUninstall } from '../../../shared/domains/install/install-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { InstallEngine } from './install-engine.ts';
import { appVolumeNames, installedContainer } from './installed-app.ts';

/**
 * install_uninstall removes an app's container and keeps its volumes;
 * install_purge removes both. Only what install_app labelled is touched, and
 * an app that is not in the catalog any more can still be removed.
 */
export function registerInstallRemoval(dispatcher: Dispatcher, install: InstallEngine): void {
  const docker = install.engine.docker;
  const removeContainer = async (app: string): Promise<boolean> => {
    const container = await installedContainer(docker, app);
    if (!container) return false;
    await docker.getContainer(container.Id).remove({ force: true });
    return true;
  };
  dispatcher.register<typeof installUninstall>('install.uninstall', (params) =>
    install.engine.run(async () => {
      const removed = await removeContainer(params.app);
      const kept = await appVolumeNames(docker, params.app);
      return { payload: { app: params.app, status: removed ? 'uninstalled' : 'not_installed', container_removed: removed, volumes_kept: kept } };
    }),
  );
  dispatcher.register<typeof installPurge>('install.purge', (params) =>
    install.engine.run(async () => {
      const removed = await removeContainer(params.app);
      const volumes = await appVolumeNames(docker, params.app);
      for (const name of volumes) await docker.getVolume(name).remove();
      const purged = removed || volumes.length > 0;
      return { payload: { app: params.app, status: purged ? 'purged' : 'not_installed', container_removed: removed, volumes_removed: volumes } };
    }),
  );
}
