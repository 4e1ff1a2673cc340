import type { installList } from '../../../shared/domains/install/install-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { appPorts, appVolumes } from './app-parts.ts';
import { APP_LABEL, type InstallEngine } from './install-engine.ts';

/** install_list: the catalog, with whether each app is installed on this host. */
export function registerInstallList(dispatcher: Dispatcher, install: InstallEngine): void {
  dispatcher.register<typeof installList>('install.list', (params) =>
    install.engine.run(async () => {
      const { entries, errors } = await install.catalog.load();
      const containers = await install.engine.docker.listContainers({ all: true, filters: { label: [APP_LABEL] } });
      const installed = new Set(containers.map((container) => container.Labels[APP_LABEL]));
      const apps = [...entries.values()]
        .filter((entry) => params.category === undefined || entry.app.category === params.category)
        .sort((a, b) => a.app.name.localeCompare(b.app.name))
        .map(({ app, source }) => ({
          name: app.name,
          description: app.description,
          category: app.category,
          image: app.image,
          ports: appPorts(app),
          volumes: appVolumes(app).map((volume) => ({ name: volume.volume, path: volume.path })),
          source,
          installed: installed.has(app.name),
        }));
      return { payload: { apps, count: apps.length }, errors };
    }),
  );
}
