import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { SCAN_LIMIT_MS } from './network-head.ts';

const deviceShape = z.object({
  ip: z.string(),
  mac: z.string().nullable(),
  hostname: z.string().nullable().describe('From reverse DNS or multicast DNS, where one answers; null otherwise.'),
  status: z.enum(['up', 'self']).describe('up: answered address resolution during the scan; self: an address of this host.'),
  interface: z.string(),
});

export const networkScan = defineAction({
  id: 'network.scan',
  tool: 'network_scan',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'network',
  title: 'Scan local networks',
  description: "Devices on the IPv4 subnets of each host's own interfaces (IP, MAC, DNS or mDNS name, status), found by ARP within 30 s.",
  input: z
    .object({
      subnet: z.string().max(64).optional().describe('Part of an own subnet, such as 192.168.1.0/24 (default: each, up to /22).'),
    })
    .strict(),
  output: z.object({
    subnets: z.array(z.string()).describe('The subnets scanned.'),
    skipped_subnets: z.array(z.object({ subnet: z.string(), reason: z.string() })),
    devices: z.array(deviceShape),
    count: z.number(),
    duration_ms: z.number(),
  }),
  table: { list: 'devices', columns: ['ip', 'mac', 'hostname', 'status', 'interface'] },
  waitsMs: () => SCAN_LIMIT_MS,
  related: ['network.wake'],
});

export const wake = defineAction({
  id: 'network.wake',
  tool: 'wake',
  risk: 'write',
  level: 1,
  runsOn: 'broker',
  collector: null,
  title: 'Wake-on-LAN',
  description: "Sends a Wake-on-LAN magic packet from an online agent on the machine's segment, chosen by the broker.",
  input: z
    .object({
      target: z.string().min(1).max(64).describe('A MAC (aa:bb:cc:dd:ee:ff) or a configured name.'),
      broadcast: z.string().max(15).optional().describe("Broadcast address of the machine's segment (192.168.1.255): picks the agent that sends."),
    })
    .strict(),
  output: z.object({
    target: z.string(),
    mac: z.string(),
    broadcast: z.string(),
    sent_by: z.string().describe('The agent that sent the packet.'),
    sent_by_subnet: z.string().nullable().describe("The agent's subnet that holds the broadcast address."),
    bytes: z.number(),
  }),
  openWorld: false,
  table: { columns: ['target', 'mac', 'broadcast', 'sent_by', 'sent_by_subnet'] },
});

/**
 * What the broker asks the agent it chose for wake: send the magic packet.
 * Not a tool of its own (wake is), so it is not in the domain's action list
 * but among its `brokerCalls`.
 */
export const sendMagicPacket = defineAction({
  id: 'network.send_magic_packet',
  tool: 'send_magic_packet',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'network',
  title: 'Send a magic packet',
  description: 'Sends a Wake-on-LAN magic packet to a broadcast address.',
  input: z
    .object({
      mac: z.string().regex(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/),
      broadcast: z.ipv4(),
    })
    .strict(),
  output: z.object({ mac: z.string(), broadcast: z.string(), port: z.number(), bytes: z.number() }),
});
