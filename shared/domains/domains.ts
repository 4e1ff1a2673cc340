import type { FlagValues } from '../options/command-line.ts';
import type { Domain } from './domain.ts';
import { DOMAIN_FOLDERS } from './domains.gen.ts';

/**
 * Every domain fleetmesh has, one per folder of shared/domains/ (listed there by
 * `npm run gen`), in the order docs and surfaces list them: by rank, then name.
 */
export const DOMAINS: readonly (typeof DOMAIN_FOLDERS)[number][] = [...DOMAIN_FOLDERS].sort(
  (a: Domain, b: Domain) => a.rank - b.rank || a.name.localeCompare(b.name),
);

type FlagsOf<D> = D extends { flags: infer F } ? F : Record<never, never>;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** Every domain's agent flags, as one typed set. */
type DomainFlags = Intersection<FlagsOf<(typeof DOMAINS)[number]>>;

/** The values of every domain's agent flags, by flag name. */
export type DomainFlagValues = FlagValues<DomainFlags>;

/** The agent flags the domains declare, in domain order: `fleetmesh agent` and `fleetmesh up` take them. */
export const DOMAIN_FLAGS = Object.assign({}, ...DOMAINS.map((domain: Domain) => domain.flags ?? {})) as DomainFlags;

type BrokerFlagsOf<D> = D extends { brokerFlags: infer F } ? F : Record<never, never>;
/** Every domain's broker flags, as one typed set. */
type DomainBrokerFlags = Intersection<BrokerFlagsOf<(typeof DOMAINS)[number]>>;

/** The values of every domain's broker flags, by flag name. */
export type DomainBrokerFlagValues = FlagValues<DomainBrokerFlags>;

/** The broker flags the domains declare, in domain order: `fleetmesh broker` and `fleetmesh up` take them. */
export const DOMAIN_BROKER_FLAGS = Object.assign({}, ...DOMAINS.map((domain: Domain) => domain.brokerFlags ?? {})) as DomainBrokerFlags;

/** The schema of every report kind an agent may send, from the domains that declare them. */
export function reportSchemas(): ReadonlyMap<string, Domain['reports'][string]> {
  return new Map(DOMAINS.flatMap((domain) => Object.entries(domain.reports)));
}
