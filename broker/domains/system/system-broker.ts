import { systemDomain } from '../../../shared/domains/system/system-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { SystemIndexer } from './system-indexer.ts';

/** Each host's alert crossings of its CPU, memory and disk thresholds, as its agent reports them. */
export const systemBroker: BrokerDomain = {
  domain: systemDomain,
  indexer: SystemIndexer,
};
