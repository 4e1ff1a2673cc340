import type { Resolver } from 'node:dns/promises';
import { formatSubnet, hostAddresses, parseCidr, type Subnet, within } from '../../../shared/domains/network/ipv4.ts';
import type { networkScan } from '../../../shared/domains/network/network-actions.ts';
import { SCAN_LIMIT_MS } from '../../../shared/domains/network/network-head.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { sleep } from '../../connection/backoff.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { dgram, dnsPromises } from '../../lazy-builtins.ts';
import { mdnsNames } from './mdns-name.ts';
import { resolvedNeighbours } from './neighbour-table.ts';
import { type OwnSubnet, ownSubnets } from './own-subnets.ts';

/** The largest subnet scanned without being named: a /22, 1022 addresses. */
const MAX_DEFAULT_PREFIX = 22;
/** Waits for address resolution after each round of probes. */
const ROUND_WAIT_MS = 1200;
const ROUNDS = 2;
/** The discard port: a probe needs no listener, only the address resolution sending it causes. */
const DISCARD_PORT = 9;
const NAME_WAIT_MS = 1000;

type Device = { ip: string; mac: string | null; hostname: string | null; status: 'up' | 'self'; interface: string };

/** The subnets a scan covers: the one named (within an own subnet), or each own subnet small enough. */
function chooseSubnets(
  own: OwnSubnet[],
  named: string | undefined,
): { scan: (Subnet & { interface: string })[]; skipped: { subnet: string; reason: string }[] } {
  if (named !== undefined) {
    const subnet = parseCidr(named);
    if (!subnet) throw new FleetError('invalid_argument', `subnet "${named}" is not IPv4 CIDR`, { hint: 'Give it as 192.168.1.0/24.' });
    const home = own.find((candidate) => within(subnet, candidate));
    if (!home) {
      throw new FleetError('invalid_argument', `subnet ${formatSubnet(subnet)} is not within a subnet of this host's interfaces`, {
        hint: `This host's subnets: ${own.map(formatSubnet).join(', ') || 'none'}. network_scan scans only those.`,
      });
    }
    if (subnet.prefix < MAX_DEFAULT_PREFIX) {
      throw new FleetError('invalid_argument', `subnet ${formatSubnet(subnet)} is larger than a /${MAX_DEFAULT_PREFIX}, which a scan could not cover in 30 s`, {
        hint: `Name a part of it of /${MAX_DEFAULT_PREFIX} or smaller.`,
      });
    }
    return { scan: [{ ...subnet, interface: home.interface }], skipped: [] };
  }
  const scan: (Subnet & { interface: string })[] = [];
  const skipped: { subnet: string; reason: string }[] = [];
  for (const subnet of own) {
    if (scan.some((s) => s.network === subnet.network && s.prefix === subnet.prefix)) continue;
    if (subnet.prefix < MAX_DEFAULT_PREFIX)
      skipped.push({ subnet: formatSubnet(subnet), reason: `larger than /${MAX_DEFAULT_PREFIX}: name a part of it with subnet` });
    else scan.push(subnet);
  }
  return { scan, skipped };
}

async function reverseName(resolver: Resolver, ip: string): Promise<string | null> {
  try {
    return (await resolver.reverse(ip))[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * network_scan: sends one UDP datagram to each address of the chosen subnets
 * so the kernel resolves it, waits, and reads which addresses resolved to a
 * MAC. Nothing listens to the datagrams; only addresses within this host's own
 * subnets are probed, and the whole scan stops by 30 s or the call's deadline.
 */
export function registerNetworkScan(dispatcher: Dispatcher, options: { reverseDns: boolean }): void {
  dispatcher.register<typeof networkScan>('network.scan', async (params, context) => {
    const started = Date.now();
    const stopAt = Math.min(context.deadlineUnixMs - 500, started + SCAN_LIMIT_MS);
    const own = ownSubnets();
    const { scan, skipped } = chooseSubnets(own, params.subnet);
    const selves = new Set(own.map((s) => s.address));
    const targets = scan.flatMap((subnet) => hostAddresses(subnet).filter((ip) => !selves.has(ip)));
    const socket = dgram().createSocket('udp4');
    socket.on('error', () => undefined);
    const probe = Buffer.alloc(1);
    try {
      for (let round = 0; round < ROUNDS && Date.now() < stopAt && !context.signal.aborted; round += 1) {
        for (const ip of targets) socket.send(probe, DISCARD_PORT, ip, () => undefined);
        await sleep(Math.max(0, Math.min(ROUND_WAIT_MS, stopAt - Date.now())), context.signal);
      }
    } finally {
      socket.close();
    }
    const wanted = new Set(targets);
    const neighbours = (await resolvedNeighbours().catch(() => [])).filter((n) => wanted.has(n.ip));
    const found: Device[] = [
      ...own
        .filter((s) => scan.some((subnet) => subnet.network === s.network && subnet.prefix === s.prefix))
        .map((s) => ({ ip: s.address, mac: null, hostname: null, status: 'self' as const, interface: s.interface })),
      ...neighbours.map((n) => ({ ip: n.ip, mac: n.mac, hostname: null, status: 'up' as const, interface: n.device })),
    ];
    const resolver = new (dnsPromises().Resolver)({ timeout: NAME_WAIT_MS, tries: 1 });
    // Reverse DNS first, then the name a device gives itself over multicast DNS; both within the scan's time.
    const nameWaitMs = Math.max(0, Math.min(NAME_WAIT_MS, stopAt - Date.now()));
    const [reverse, multicast] = await Promise.all([
      Promise.all(found.map((device) => (options.reverseDns && nameWaitMs > 0 ? reverseName(resolver, device.ip) : null))),
      mdnsNames(
        neighbours.map((n) => n.ip),
        nameWaitMs,
        context.signal,
      ),
    ]);
    const devices = found.map((device, i) => ({ ...device, hostname: reverse[i] ?? multicast.get(device.ip) ?? null }));
    devices.sort((a, b) => a.ip.localeCompare(b.ip, undefined, { numeric: true }));
    return {
      payload: { subnets: scan.map(formatSubnet), skipped_subnets: skipped, devices, count: devices.length, duration_ms: Date.now() - started },
    };
  });
}
