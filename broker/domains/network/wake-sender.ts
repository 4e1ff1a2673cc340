import { contains, formatSubnet, parseCidr, type Subnet } from '../../../shared/domains/network/ipv4.ts';
import { sendMagicPacket } from '../../../shared/domains/network/network-actions.ts';
import { NETWORKS_FACT } from '../../../shared/domains/network/network-head.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Host } from '../../agents/agent-registry.ts';
import { offersAction } from '../../agents/shared-hellos.ts';

/** The limited broadcast: it says nothing about which segment the target is on. */
export const LIMITED_BROADCAST = '255.255.255.255';

export interface WakeSender {
  host: Host;
  /** The sender's subnet that holds the broadcast address; null when the limited broadcast was asked for. */
  subnet: Subnet | null;
}

/** The subnets an agent says it is on (its Hello's facts: a claim). */
function claimedSubnets(host: Host): Subnet[] {
  const fact = host.hello?.facts[NETWORKS_FACT];
  if (typeof fact !== 'string') return [];
  return fact
    .split(',')
    .map((cidr) => parseCidr(cidr))
    .filter((s): s is Subnet => s !== undefined);
}

/**
 * Which agent sends a magic packet: among the online agents the caller may
 * change (`permitted`, already filtered by grants), one whose subnets hold the
 * broadcast address, first by name. The subnets are what the agents claim, so a
 * claim can only choose among agents the caller could use anyway: it never
 * reaches an agent the caller may not. With the limited broadcast, the only
 * permitted agent is the one, and more than one is ambiguous.
 */
export function chooseWakeSender(permitted: readonly Host[], broadcast: string): WakeSender {
  const online = permitted
    .filter((host) => host.session?.isOpen && host.hello !== null && offersAction(host.hello, sendMagicPacket.id))
    .sort((a, b) => a.name.localeCompare(b.name));
  if (broadcast === LIMITED_BROADCAST) {
    if (online.length === 1) return { host: online[0] as Host, subnet: null };
    throw new FleetError(
      online.length === 0 ? 'agent_offline' : 'ambiguous',
      `${online.length === 0 ? 'no' : `${online.length}`} online agents could send it, and the limited broadcast does not say which segment the target is on`,
      {
        hint: "Pass broadcast, the broadcast address of the target's segment (such as 192.168.1.255), or configure the target with --wake-target NAME=MAC@BROADCAST.",
      },
    );
  }
  for (const host of online) {
    const subnet = claimedSubnets(host).find((s) => contains(s, broadcast));
    if (subnet) return { host, subnet };
  }
  throw new FleetError('not_found', `no online agent you may use is on the segment of ${broadcast}`, {
    hint: `Agents on it must be online and granted to you; their subnets are in list_agents (${NETWORKS_FACT}). Known: ${
      online.map((h) => `${h.name} ${claimedSubnets(h).map(formatSubnet).join(' ')}`).join('; ') || 'none online'
    }.`,
  });
}
