import { packagesHead } from '../../../shared/domains/packages/packages-head.ts';
import type { PackagesOptions } from '../../../shared/domains/packages/packages-options.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { PackagesCollector } from './packages-collector.ts';

/** The host's installed packages and pending updates. */
export const packagesPlugin: CollectorPlugin<PackagesCollector> = {
  domain: packagesHead,
  create: ({ domainOptions, hooks }) => new PackagesCollector(domainOptions as PackagesOptions, hooks.report),
};
