import { logsDomain } from '../../../shared/domains/logs/logs-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';

/** Log files are read on their hosts: the broker half has nothing to index. */
export const logsBroker: BrokerDomain = {
  domain: logsDomain,
};
