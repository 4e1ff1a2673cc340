import { networkDomain } from '../../../shared/domains/network/network-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { wakeHandler } from './wake.ts';
import { wakeService } from './wake-service.ts';

/** Wake-on-LAN: the broker picks an agent on the target's segment to send the packet. */
export const networkBroker: BrokerDomain = {
  domain: networkDomain,
  actions: [wakeHandler],
  services: [wakeService],
};
