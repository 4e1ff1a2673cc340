import { packagesDomain } from '../../../shared/domains/packages/packages-domain.ts';
import type { PackagesOptions } from '../../../shared/domains/packages/packages-options.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { PackagesCollector } from './packages-collector.ts';

/** The host's installed packages and pending updates. */
export const packagesPlugin: CollectorPlugin<PackagesCollector> = {
  domain: packagesDomain,
  create: ({ domainOptions, hooks }) => new PackagesCollector(domainOptions as PackagesOptions, hooks.report),
};
