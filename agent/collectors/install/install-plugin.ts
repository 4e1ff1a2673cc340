import { installHead } from '../../../shared/domains/install/install-head.ts';
import { dockerConfigDir, RegistryCredentials } from '../../engine/registry-credentials.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { InstallCollector } from './install-collector.ts';

/** Catalog apps as containers, where an engine answers; a missing image is pulled with the host's registry login (--docker-config). */
export const installPlugin: CollectorPlugin<InstallCollector> = {
  domain: installHead,
  create: ({ options, flags, engine }) =>
    new InstallCollector({
      docker: engine,
      address: options.dockerAddress,
      appCatalogDir: options.appCatalogDir,
      credentials: new RegistryCredentials(dockerConfigDir(flags['docker-config'])),
    }),
};
