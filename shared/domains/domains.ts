import type { Domain } from './domain.ts';
import { DOMAIN_FOLDERS } from './domains.gen.ts';

export { DOMAIN_BROKER_FLAGS, DOMAIN_FLAGS, type DomainBrokerFlagValues, type DomainFlagValues } from './domain-heads.ts';

/**
 * Every domain fleetmesh has, one per folder of shared/domains/ (listed there by
 * `npm run gen`), in the order docs and surfaces list them: by rank, then name.
 * Importing this loads every domain's schemas: an agent starts from
 * `domain-heads.ts` instead.
 */
export const DOMAINS: readonly (typeof DOMAIN_FOLDERS)[number][] = [...DOMAIN_FOLDERS].sort(
  (a: Domain, b: Domain) => a.rank - b.rank || a.name.localeCompare(b.name),
);

/** The schema of every report kind an agent may send, from the domains that declare them. */
export function reportSchemas(): ReadonlyMap<string, Domain['reports'][string]> {
  return new Map(DOMAINS.flatMap((domain) => Object.entries(domain.reports)));
}
