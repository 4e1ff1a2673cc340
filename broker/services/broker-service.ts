import type { Domain } from '../../shared/domains/domain.ts';
import type { DomainBrokerFlagValues } from '../../shared/domains/domains.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { FleetIndex } from '../index/fleet-index.ts';

/** What a broker service may use of the running broker. */
export interface BrokerServiceContext {
  registry: AgentRegistry;
  index: FleetIndex;
  log: Logger;
}

/**
 * A service the broker runs for a domain's broker actions (notification
 * channels, the machines wake knows), configured by the broker flags the
 * domain declares, listed in the `services` of the domain's broker half
 * (`broker/domains/<domain>/`); the broker starts and stops every one.
 */
export interface BrokerServicePlugin<O = unknown, S extends object = object> {
  /** Its key in the broker's options (`services`). */
  readonly name: string;
  /** The domain whose `brokerFlags` configure it. */
  readonly domain: Domain;
  /** Its options from the flag values, resolved with the broker's options: a bad value stops the broker with one line. */
  options(flags: DomainBrokerFlagValues): O;
  /** Its options when none are given (an in-process broker). */
  readonly defaults: O;
  /** Starts it on a broker whose registry and index run. */
  start(options: O, context: BrokerServiceContext): S;
  /** Ends what it started, when the broker stops. */
  stop?(service: S): void;
}

export function defineBrokerService<O, S extends object>(plugin: BrokerServicePlugin<O, S>): BrokerServicePlugin<O, S> {
  return plugin;
}
