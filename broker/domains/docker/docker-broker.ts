import { dockerDomain } from '../../../shared/domains/docker/docker-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { DockerIndexer } from './docker-indexer.ts';

/** Each host's engine as the broker knows it: its containers and volumes, and their events. */
export const dockerBroker: BrokerDomain = {
  domain: dockerDomain,
  indexer: DockerIndexer,
  resources: [
    {
      template: 'hosts/{host}/containers/{name}',
      name: 'container',
      title: 'Container',
      description: 'A container digest: state, image, restarts and failures, what it belongs to.',
      type: 'container',
      content: 'digest',
    },
    {
      template: 'hosts/{host}/volumes/{name}',
      name: 'volume',
      title: 'Volume',
      description: "A volume digest on one host's engine.",
      type: 'volume',
      content: 'digest',
    },
  ],
};
