import type { CacheHint } from '@modelcontextprotocol/server';

/**
 * How long a 2026-07-28 client may reuse a read the broker answers from its
 * fleet index (state the agents reported, not a fresh call): about one
 * heartbeat. Private, since grants shape every answer.
 */
export const INDEX_READ_HINT: CacheHint = { ttlMs: 5000, cacheScope: 'private' };

/** Resources answered from the fleet index and the registry's latest state. */
const INDEX_BACKED = /^fleet:\/\/(status|recommendations|agents(\/.+)?)$/;

/** The cache hint of a resource read, or none (the SDK then answers ttlMs 0). 2025-era answers never carry one. */
export function readCacheHint(uri: string): CacheHint | undefined {
  return INDEX_BACKED.test(uri) ? INDEX_READ_HINT : undefined;
}

/**
 * The hints of the lists a 2026-07-28 client may cache. The tools and prompts
 * an identity sees change only with its level or the broker's, so a minute is
 * safe; the resource list follows the fleet, so it is never reused.
 */
export const LIST_CACHE_HINTS = {
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
  'prompts/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
} as const satisfies Record<string, CacheHint>;
