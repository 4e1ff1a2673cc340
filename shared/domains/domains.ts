import { agentDomain } from '../domains/agent/agent-domain.ts';
import { backupDomain } from './backup/backup-domain.ts';
import { checkupDomain } from './checkup/checkup-domain.ts';
import { dockerDomain } from './docker/docker-domain.ts';
import type { Domain } from './domain.ts';
import { fleetDomain } from './fleet/fleet-domain.ts';
import { installDomain } from './install/install-domain.ts';
import { networkDomain } from './network/network-domain.ts';
import { notifyDomain } from './notify/notify-domain.ts';
import { proxmoxDomain } from './proxmox/proxmox-domain.ts';
import { sandboxDomain } from './sandbox/sandbox-domain.ts';
import { swarmDomain } from './swarm/swarm-domain.ts';
import { systemDomain } from './system/system-domain.ts';
import { watchDomain } from './watch/watch-domain.ts';

/** Every domain fleetmesh has, in the order docs and surfaces list them. Adding a domain: declare it in its folder, list it here. */
export const DOMAINS = [
  fleetDomain,
  agentDomain,
  systemDomain,
  dockerDomain,
  swarmDomain,
  sandboxDomain,
  proxmoxDomain,
  checkupDomain,
  watchDomain,
  networkDomain,
  notifyDomain,
  backupDomain,
  installDomain,
] as const satisfies readonly Domain[];

type FlagsOf<D> = D extends { flags: infer F } ? F : Record<never, never>;
type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** Every domain's agent flags, as one typed set. */
type DomainFlags = Intersection<FlagsOf<(typeof DOMAINS)[number]>>;

/** The agent flags the domains declare, in domain order: `fleetmesh agent` and `fleetmesh up` take them. */
export const DOMAIN_FLAGS = Object.assign({}, ...DOMAINS.map((domain: Domain) => domain.flags ?? {})) as DomainFlags;

/** The schema of every report kind an agent may send, from the domains that declare them. */
export function reportSchemas(): ReadonlyMap<string, Domain['reports'][string]> {
  return new Map(DOMAINS.flatMap((domain) => Object.entries(domain.reports)));
}
