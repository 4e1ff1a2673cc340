import { networkInterfaces } from 'node:os';
import { type Subnet, subnetOf } from '../../../shared/domains/network/ipv4.ts';

/** One IPv4 address of this host and the subnet it is on. */
export interface OwnSubnet extends Subnet {
  interface: string;
  address: string;
}

/** This host's IPv4 subnets (loopback left out), from its interfaces now. */
export function ownSubnets(interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()): OwnSubnet[] {
  const subnets: OwnSubnet[] = [];
  for (const [name, addresses] of Object.entries(interfaces)) {
    for (const address of addresses ?? []) {
      if (address.family !== 'IPv4' || address.internal || !address.cidr) continue;
      const prefix = Number(address.cidr.split('/')[1]);
      subnets.push({ ...subnetOf(address.address, prefix), interface: name, address: address.address });
    }
  }
  return subnets;
}
