import type { Collector } from '../../agent/collectors/collector.ts';
import type { Action } from '../../shared/catalog/action.ts';
import { CATALOG } from '../../shared/catalog/catalog.ts';

/**
 * Collectors that claim every host action of the catalog, each answering
 * nothing: an agent started with them makes the fleet serve every domain, so
 * the tool, prompt and template lists are the full catalog (they follow what
 * the fleet can serve).
 */
export function everyDomainCollectors(): Collector[] {
  const byCollector = new Map<string, Action[]>();
  for (const action of CATALOG) {
    if (action.collector === null || action.collector === 'agent') continue;
    byCollector.set(action.collector, [...(byCollector.get(action.collector) ?? []), action]);
  }
  return [...byCollector].map(([name, actions]) => ({
    name,
    probe: async () => ({ available: true, reason: '' }),
    register(dispatcher) {
      for (const action of actions) dispatcher.register(action, async () => ({ payload: null }));
    },
  }));
}
