import { CATALOG } from '../../shared/catalog/catalog.ts';
import type { HostSample } from '../../shared/catalog/sample.ts';

/** The host sample every simulated agent of the benches reports: fixed figures, so rounds compare. */
export const BENCH_SAMPLE: HostSample = {
  cpu_percent: 12.5,
  memory_percent: 41.2,
  memory_used_bytes: 3_400_000_000,
  memory_total_bytes: 8_200_000_000,
  disk_percent: 55.1,
  disk_mount: '/',
  load_1: 0.42,
  containers_running: 7,
  containers_total: 9,
  net_rx_bytes: 123_456_789,
  net_tx_bytes: 98_765_432,
  sampled_at_unix_ms: Date.now(),
};

/**
 * The actions a simulated agent announces in its Hello: every action of the
 * catalog, as an agent on a host with every domain announces them, beside the
 * few it answers. A Hello of three actions made the broker's memory per agent
 * look smaller than a real fleet's.
 */
export function announcedActions(answered: readonly string[]): string[] {
  return [...new Set([...answered, ...CATALOG.map((action) => action.id)])];
}
