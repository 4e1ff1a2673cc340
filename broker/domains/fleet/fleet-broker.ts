import { fleetDomain } from '../../../shared/domains/fleet/fleet-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { FLEET_PROMPTS } from './fleet-prompts.ts';

/** What the broker answers itself of its agents and its index of the fleet. */
export const fleetBroker: BrokerDomain = {
  domain: fleetDomain,
  resources: [
    {
      template: 'hosts/{host}',
      name: 'host',
      title: 'Host',
      description: 'A host digest: state, facts, collectors, its latest sample.',
      type: 'host',
      content: 'digest',
    },
  ],
  prompts: FLEET_PROMPTS,
};
