import { dockerDomain } from '../../../shared/domains/docker/docker-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { DockerIndexer } from './docker-indexer.ts';

/** Each host's engine as the broker knows it: its containers and volumes, and their events. */
export const dockerBroker: BrokerDomain = {
  domain: dockerDomain,
  indexer: DockerIndexer,
};
