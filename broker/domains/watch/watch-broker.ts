import { watchDomain } from '../../../shared/domains/watch/watch-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { WatchIndexer } from './watch-indexer.ts';

/** Each host's restart incidents of the containers it watches, as its agent reports them. */
export const watchBroker: BrokerDomain = {
  domain: watchDomain,
  indexer: WatchIndexer,
};
