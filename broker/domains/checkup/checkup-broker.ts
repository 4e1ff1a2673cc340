import { checkupDomain } from '../../../shared/domains/checkup/checkup-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { CHECKUP_PROMPTS } from './checkup-prompts.ts';

/** The check-ups' part of the broker: the investigation of what changed on a host. */
export const checkupBroker: BrokerDomain = {
  domain: checkupDomain,
  prompts: CHECKUP_PROMPTS,
};
