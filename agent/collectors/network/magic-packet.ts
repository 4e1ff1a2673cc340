import { contains, formatSubnet } from '../../../shared/domains/network/ipv4.ts';
import type { sendMagicPacket } from '../../../shared/domains/network/network-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dgram } from '../../lazy-builtins.ts';
import { ownSubnets } from './own-subnets.ts';

/** Wake-on-LAN's customary port. */
const WOL_PORT = 9;

/** The magic packet: six bytes 0xFF, then the MAC sixteen times (102 bytes). */
function magicPacket(mac: string): Buffer {
  const address = Buffer.from(mac.replace(/:/g, ''), 'hex');
  return Buffer.concat([Buffer.alloc(6, 0xff), ...Array.from({ length: 16 }, () => address)]);
}

/**
 * The broker's wake, on the agent it chose: one magic packet to the segment's
 * broadcast address, which must be the limited broadcast or lie in one of this
 * host's own subnets (a packet never leaves for a network the host is not on).
 */
export function registerMagicPacket(dispatcher: Dispatcher): void {
  dispatcher.register<typeof sendMagicPacket>('network.send_magic_packet', async (params) => {
    const own = ownSubnets();
    if (params.broadcast !== '255.255.255.255' && !own.some((subnet) => contains(subnet, params.broadcast))) {
      throw new FleetError('invalid_argument', `${params.broadcast} is not on a subnet of this host`, {
        hint: `This host's subnets: ${own.map(formatSubnet).join(', ') || 'none'}.`,
      });
    }
    const packet = magicPacket(params.mac);
    const socket = dgram().createSocket('udp4');
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(0, () => {
          socket.setBroadcast(true);
          socket.send(packet, WOL_PORT, params.broadcast, (error) => (error ? reject(error) : resolve()));
        });
      });
    } catch (error) {
      throw new FleetError('collector_failed', `could not send the magic packet to ${params.broadcast}: ${(error as Error).message}`, {
        collector: 'network',
        hint: 'Check that this host has a route to that broadcast address.',
      });
    } finally {
      socket.close();
    }
    return { payload: { mac: params.mac, broadcast: params.broadcast, port: WOL_PORT, bytes: packet.length } };
  });
}
