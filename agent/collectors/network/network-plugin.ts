import { networkDomain } from '../../../shared/domains/network/network-domain.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { NetworkCollector } from './network-collector.ts';

/** The host's own subnets: scan and Wake-on-LAN. */
export const networkPlugin: CollectorPlugin<NetworkCollector> = {
  domain: networkDomain,
  create: ({ options, flags }) => new NetworkCollector({ reverseDns: options.scanReverseDns ?? flags['scan-reverse-dns'] }),
};
