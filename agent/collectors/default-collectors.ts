import { DOMAIN_FLAGS, DOMAINS, type DomainFlagValues } from '../../shared/domains/domains.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentOptions } from '../agent-options.ts';
import type { Collector } from './collector.ts';
import type { CollectorContext, CollectorHooks, CollectorPlugin } from './collector-plugin.ts';
import { COLLECTOR_PLUGINS } from './collector-plugins.gen.ts';
import type { SystemSampler } from './system/system-sampler.ts';

/** Each domain flag's declared default, under the values the agent was given. */
function domainFlagValues(options: AgentOptions): DomainFlagValues {
  const defaults = Object.fromEntries(Object.entries(DOMAIN_FLAGS).map(([flag, spec]) => [flag, (spec as { default?: unknown }).default]));
  return { ...defaults, ...options.domainFlags } as DomainFlagValues;
}

function rankOf(plugin: CollectorPlugin): number {
  return DOMAINS.findIndex((domain) => domain.name === plugin.domain.name);
}

/**
 * The collectors every agent runs: one per folder of agent/collectors/ (each
 * plug-in decides from the options whether its collector has work here), in
 * their domains' order.
 */
export function defaultCollectors(options: AgentOptions, sampler: SystemSampler, log: Logger, hooks: CollectorHooks): Collector[] {
  const made = new Map<CollectorPlugin, Collector>();
  const values = new Map<string, unknown>();
  const flags = domainFlagValues(options);
  const make = <C extends Collector>(plugin: CollectorPlugin<C>): C => {
    let collector = made.get(plugin) as C | undefined;
    if (!collector) {
      const { domain } = plugin;
      const context: CollectorContext = {
        options,
        flags,
        domainOptions: options.domainOptions && domain.name in options.domainOptions ? options.domainOptions[domain.name] : domain.agentOptions?.(flags),
        sampler,
        log: log.child({ collector: domain.name }),
        hooks,
        use: make,
        shared: <T>(key: string, create: () => T): T => {
          if (!values.has(key)) values.set(key, create());
          return values.get(key) as T;
        },
      };
      collector = plugin.create(context);
      made.set(plugin, collector);
    }
    return collector;
  };
  return [...COLLECTOR_PLUGINS].sort((a, b) => rankOf(a) - rankOf(b)).map((plugin) => make(plugin));
}
