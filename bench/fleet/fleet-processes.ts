import { fileURLToPath } from 'node:url';
import { BrokerProcess } from './broker-process.ts';

const FLEET_HOST = fileURLToPath(new URL('./fleet-host.ts', import.meta.url));
/** Simulated agents per fleet process. */
export const FLEET_SHARE = 2500;

/**
 * The enrolled fleet in `file` (its first `count` agents), connected to the
 * brokers at `addresses` from processes of its own, one per 2,500 agents, each
 * started as soon as it has read the file. Resolves once every process has
 * started its agents' connection loops (not once they are connected).
 */
export async function startFleet(file: string, count: number, addresses: string[]): Promise<BrokerProcess[]> {
  const fleets: BrokerProcess[] = [];
  const share = Math.ceil(count / Math.max(1, Math.ceil(count / FLEET_SHARE)));
  for (let start = 0; start < count; start += share) fleets.push(new BrokerProcess(FLEET_HOST, file, [String(start), String(start + share)]));
  try {
    await Promise.all(fleets.map(async (fleet) => fleet.ready.then(() => fleet.request('connect', { addresses }))));
  } catch (error) {
    await Promise.all(fleets.map((fleet) => fleet.stop().catch(() => {})));
    throw error;
  }
  return fleets;
}
