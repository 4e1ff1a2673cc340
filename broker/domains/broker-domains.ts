import type { BrokerDomain } from './broker-domain.ts';
import { BROKER_DOMAIN_FOLDERS } from './broker-domains.gen.ts';

/** Every domain's broker half, one per folder of broker/domains/ (listed there by `npm run gen`), in its domain's rank. */
export const BROKER_DOMAINS: readonly BrokerDomain[] = [...BROKER_DOMAIN_FOLDERS].sort(
  (a, b) => a.domain.rank - b.domain.rank || a.domain.name.localeCompare(b.domain.name),
);
