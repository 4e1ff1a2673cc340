import { NETWORKS_FACT } from '../../../shared/domains/network/network-head.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { registerMagicPacket } from './magic-packet.ts';
import { registerNetworkScan } from './network-scan.ts';
import { ownSubnets } from './own-subnets.ts';

/**
 * The host's local IPv4 networks: scanning them for devices, and sending
 * Wake-on-LAN packets for the broker's wake. Its facts name the host's
 * subnets, which the broker uses to choose the agent on a target's segment.
 */
export class NetworkCollector implements Collector {
  readonly name = 'network';

  constructor(private readonly options: { reverseDns: boolean }) {}

  async probe(): Promise<CollectorStatus> {
    return ownSubnets().length > 0
      ? { available: true, reason: '' }
      : { available: false, absent: true, reason: 'this host has no IPv4 address outside loopback' };
  }

  facts(): Record<string, string | number | boolean> {
    const subnets = ownSubnets().map((s) => `${s.address}/${s.prefix}`);
    return subnets.length ? { [NETWORKS_FACT]: subnets.join(',') } : {};
  }

  register(dispatcher: Dispatcher): void {
    registerNetworkScan(dispatcher, this.options);
    registerMagicPacket(dispatcher);
  }
}
