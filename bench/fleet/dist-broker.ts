import type * as Identities from '../../broker/auth/identities.ts';
import type * as BrokerModule from '../../broker/broker.ts';
import type * as BrokerOptions from '../../broker/broker-options.ts';
import type * as Logger from '../../shared/log/logger.ts';

/** A module of the compiled build (dist/), typed as its TypeScript source. */
async function fromDist<T>(path: string): Promise<T> {
  return (await import(new URL(`../../dist/${path}`, import.meta.url).href)) as T;
}

/**
 * The broker as it runs in production: from the compiled build (buildDist()
 * first), not from the sources through the TypeScript loader, whose helpers
 * (one `__name` call per closure created) cost the broker's hot paths a
 * measurable share of their CPU. Everything that touches the broker's store
 * comes from the same build.
 */
export async function loadDistBroker() {
  const [{ Broker }, { inProcessBrokerOptions }, { createIdentity }, { silentLogger }] = await Promise.all([
    fromDist<typeof BrokerModule>('broker/broker.js'),
    fromDist<typeof BrokerOptions>('broker/broker-options.js'),
    fromDist<typeof Identities>('broker/auth/identities.js'),
    fromDist<typeof Logger>('shared/log/logger.js'),
  ]);
  return { Broker, inProcessBrokerOptions, createIdentity, silentLogger };
}
