import type { DomainHead } from '../../shared/domains/domain.ts';
import type { DomainFlagValues } from '../../shared/domains/domain-heads.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentOptions } from '../agent-options.ts';
import type { EngineClient } from '../engine/engine-client.ts';
import type { SystemSampler } from '../sampler/system-sampler.ts';
import type { Collector, Report } from './collector.ts';

export interface CollectorHooks {
  /** Sends a collector's report (container events, inventories, snapshots…) to the broker. */
  report: Report;
  /** A collector became available or unavailable. */
  onAvailabilityChange(): void;
  /** A collector learned new host facts (the name of the node it manages). */
  onFactsChange(): void;
}

/** What an agent gives each collector plug-in to make its collector with. */
export interface CollectorContext {
  readonly options: AgentOptions;
  /** Every flag the domains declare: its value from the command line or config file, else its declared default. */
  readonly flags: DomainFlagValues;
  /** What its domain resolved from those flags (`Domain.agentOptions`), when it resolves them. */
  readonly domainOptions: unknown;
  readonly sampler: SystemSampler;
  /** The agent's logger, naming the collector. */
  readonly log: Logger;
  readonly hooks: CollectorHooks;
  /**
   * The agent's one Docker engine client (--docker-socket), the same for every
   * collector: each takes the slice of it that it calls. It is there on a host
   * without Docker too, where its calls fail as an absent engine's do.
   */
  readonly engine: EngineClient;
}

/**
 * A domain's collector, as the agent finds it: `agent/collectors/<domain>/<domain>-plugin.ts`
 * exports `<domain>Plugin`, and `npm run gen` lists every folder's plug-in in
 * `collector-plugins.gen.ts`. The agent runs the collectors in their domains' rank.
 */
export interface CollectorPlugin<C extends Collector = Collector> {
  readonly domain: DomainHead;
  create(context: CollectorContext): C;
}
