import { sandboxDomain } from '../../../shared/domains/sandbox/sandbox-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { SandboxIndexer } from './sandbox-indexer.ts';

/** Each host's sandboxes, found among its containers. */
export const sandboxBroker: BrokerDomain = {
  domain: sandboxDomain,
  indexer: SandboxIndexer,
  resources: [
    {
      template: 'hosts/{host}/sandboxes/{name}',
      name: 'sandbox',
      title: 'Sandbox',
      description: 'A sandbox digest: its container and state.',
      type: 'sandbox',
      content: 'digest',
    },
  ],
};
