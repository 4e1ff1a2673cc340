import { proxmoxDomain } from '../../../shared/domains/proxmox/proxmox-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { ProxmoxIndexer } from './proxmox-indexer.ts';

/** The guests of each Proxmox VE cluster, as its member agents report them. */
export const proxmoxBroker: BrokerDomain = {
  domain: proxmoxDomain,
  indexer: ProxmoxIndexer,
};
