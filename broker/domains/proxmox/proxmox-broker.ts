import { proxmoxDomain } from '../../../shared/domains/proxmox/proxmox-domain.ts';
import type { BrokerDomain } from '../broker-domain.ts';
import { ProxmoxIndexer } from './proxmox-indexer.ts';
import { pveMemberRole } from './proxmox-roles.ts';

/** The guests of each Proxmox VE cluster, as its member agents report them. */
export const proxmoxBroker: BrokerDomain = {
  domain: proxmoxDomain,
  indexer: ProxmoxIndexer,
  roles: [pveMemberRole],
  resources: [
    {
      template: 'pve/{cluster}/guests/{name}',
      name: 'guest',
      title: 'Proxmox VE guest',
      description: 'A guest digest by VMID; {cluster} is its PVE cluster, or the reporting agent for a node outside one.',
      type: 'guest',
      key: 'id',
      content: 'digest',
    },
  ],
};
