import { packagesDomain } from '../../../shared/domains/packages/packages-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { PackageIndexer } from './package-indexer.ts';

/** The hosts' installed packages as their agents report them: find type=package answers from the index. */
export const packagesBroker: BrokerDomain = {
  domain: packagesDomain,
  indexer: PackageIndexer,
  instructions:
    "package_list with name and older_than finds the hosts with a package older than a version (each host's own version order); package_updates their pending and security updates and reboots.",
};
