import { DOMAIN_FLAGS, DOMAIN_HEADS, type DomainFlagValues } from '../../shared/domains/domain-heads.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentOptions } from '../agent-options.ts';
import { createEngineClient } from '../engine/engine-client.ts';
import type { SystemSampler } from '../sampler/system-sampler.ts';
import type { Collector } from './collector.ts';
import type { CollectorHooks, CollectorPlugin } from './collector-plugin.ts';
import { COLLECTOR_PLUGINS } from './collector-plugins.gen.ts';

/** Each domain flag's declared default, under the values the agent was given. */
function domainFlagValues(options: AgentOptions): DomainFlagValues {
  const defaults = Object.fromEntries(Object.entries(DOMAIN_FLAGS).map(([flag, spec]) => [flag, (spec as { default?: unknown }).default]));
  return { ...defaults, ...options.domainFlags } as DomainFlagValues;
}

function rankOf(plugin: CollectorPlugin): number {
  return DOMAIN_HEADS.findIndex((domain) => domain.name === plugin.domain.name);
}

/**
 * The collectors every agent runs: one per folder of agent/collectors/ (each
 * plug-in decides from the options whether its collector has work here), in
 * their domains' order, each made once with the same context but its own logger.
 */
export function defaultCollectors(options: AgentOptions, sampler: SystemSampler, log: Logger, hooks: CollectorHooks): Collector[] {
  const flags = domainFlagValues(options);
  const engine = createEngineClient(options.dockerAddress);
  return [...COLLECTOR_PLUGINS]
    .sort((a, b) => rankOf(a) - rankOf(b))
    .map((plugin) => {
      const { domain } = plugin;
      return plugin.create({
        options,
        flags,
        domainOptions: options.domainOptions && domain.name in options.domainOptions ? options.domainOptions[domain.name] : domain.agentOptions?.(flags),
        sampler,
        log: log.child({ collector: domain.name }),
        hooks,
        engine,
      });
    });
}
