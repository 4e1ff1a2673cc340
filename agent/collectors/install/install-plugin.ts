import { installDomain } from '../../../shared/domains/install/install-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { agentDockerApi } from '../docker/agent-docker-api.ts';
import { InstallCollector } from './install-collector.ts';

/** Catalog apps as containers, where an engine answers. */
export const installPlugin: CollectorPlugin<InstallCollector> = {
  domain: installDomain,
  create: ({ options, shared }) =>
    new InstallCollector({ docker: agentDockerApi(options, shared), address: options.dockerAddress, appCatalogDir: options.appCatalogDir }),
};
