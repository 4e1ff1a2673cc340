import { installDomain } from '../../../shared/domains/install/install-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { InstallCollector } from './install-collector.ts';

/** Catalog apps as containers, where an engine answers. */
export const installPlugin: CollectorPlugin<InstallCollector> = {
  domain: installDomain,
  create: ({ options, engine }) => new InstallCollector({ docker: engine, address: options.dockerAddress, appCatalogDir: options.appCatalogDir }),
};
