import { networkHead } from '../../../shared/domains/network/network-head.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { NetworkCollector } from './network-collector.ts';

/** The host's own subnets: scan and Wake-on-LAN. */
export const networkPlugin: CollectorPlugin<NetworkCollector> = {
  domain: networkHead,
  create: ({ options, flags }) => new NetworkCollector({ reverseDns: options.scanReverseDns ?? flags['scan-reverse-dns'] }),
};
