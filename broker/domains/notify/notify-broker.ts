import { notifyDomain } from '../../../shared/domains/notify/notify-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { notifyService } from './notify-service.ts';
import { notifyTestHandler } from './notify-test.ts';

/** The notification channels: the fleet's notices sent out, and notify_test through them. */
export const notifyBroker: BrokerDomain = {
  domain: notifyDomain,
  actions: [notifyTestHandler],
  services: [notifyService],
};
