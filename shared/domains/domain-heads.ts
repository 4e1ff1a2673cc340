import type { Action } from '../catalog/action.ts';
import type { FlagValues } from '../options/command-line.ts';
import type { Domain, DomainHead } from './domain.ts';
import { DOMAIN_HEAD_FOLDERS, DOMAIN_LOADERS } from './domain-heads.gen.ts';

/**
 * Every domain's head (name, rank, flags, facts), in the order docs and
 * surfaces list the domains: by rank, then name. An agent starts from these
 * alone; a domain's actions and report schemas load with `loadDomain`.
 */
export const DOMAIN_HEADS: readonly (typeof DOMAIN_HEAD_FOLDERS)[number][] = [...DOMAIN_HEAD_FOLDERS].sort(
  (a: DomainHead, b: DomainHead) => a.rank - b.rank || a.name.localeCompare(b.name),
);

type FlagsOf<D> = D extends { flags: infer F } ? F : Record<never, never>;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** Every domain's agent flags, as one typed set. */
type DomainFlags = Intersection<FlagsOf<(typeof DOMAIN_HEADS)[number]>>;

/** The values of every domain's agent flags, by flag name. */
export type DomainFlagValues = FlagValues<DomainFlags>;

/** The agent flags the domains declare, in domain order: `fleetmesh agent` and `fleetmesh up` take them. */
export const DOMAIN_FLAGS = Object.assign({}, ...DOMAIN_HEADS.map((domain: DomainHead) => domain.flags ?? {})) as DomainFlags;

type BrokerFlagsOf<D> = D extends { brokerFlags: infer F } ? F : Record<never, never>;
/** Every domain's broker flags, as one typed set. */
type DomainBrokerFlags = Intersection<BrokerFlagsOf<(typeof DOMAIN_HEADS)[number]>>;

/** The values of every domain's broker flags, by flag name. */
export type DomainBrokerFlagValues = FlagValues<DomainBrokerFlags>;

/** The broker flags the domains declare, in domain order: `fleetmesh broker` and `fleetmesh up` take them. */
export const DOMAIN_BROKER_FLAGS = Object.assign({}, ...DOMAIN_HEADS.map((domain: DomainHead) => domain.brokerFlags ?? {})) as DomainBrokerFlags;

const loading = new Map<string, Promise<Domain | undefined>>();

/**
 * A domain whole (its actions and report schemas), by name, loaded on first
 * ask and kept: an agent loads a domain's schemas when a call of that domain
 * first comes. Undefined for a name no domain has.
 */
export function loadDomain(name: string): Promise<Domain | undefined> {
  let domain = loading.get(name);
  if (!domain) {
    domain = Object.hasOwn(DOMAIN_LOADERS, name) ? (DOMAIN_LOADERS[name] as () => Promise<Domain>)() : Promise.resolve(undefined);
    loading.set(name, domain);
  }
  return domain;
}

/** The declaration of an action by id, among its domain's tools and broker calls (loading the domain); undefined when none declares it. */
export async function loadAction(id: string): Promise<Action | undefined> {
  const domain = await loadDomain(id.slice(0, id.indexOf('.')));
  return [...(domain?.actions ?? []), ...(domain?.brokerCalls ?? [])].find((action) => action.id === id);
}
