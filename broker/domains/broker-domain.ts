import type { Domain } from '../../shared/domains/domain.ts';
import type { IndexerClass } from '../index/indexer.ts';

/**
 * The broker half of one domain, declared in `broker/domains/<domain>/<domain>-broker.ts`
 * as `<domain>Broker` (`npm run gen` lists every folder in `broker-domains.gen.ts`).
 * Generic code (the fleet index, routes, grants, claims, MCP resources and
 * prompts, the console) loops over these and never names what one declares.
 */
export interface BrokerDomain {
  /** The domain's shared declaration (actions, reports, flags). */
  readonly domain: Domain;
  /** Its part of the fleet index: takes its reports and answers for its resource types. */
  readonly indexer?: IndexerClass;
}
