/** IPv4 arithmetic for subnets: addresses as unsigned 32-bit numbers. */

export interface Subnet {
  /** The network address, dotted. */
  network: string;
  prefix: number;
}

function ipToNumber(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`${ip} is not an IPv4 address`);
  return (((parts[0] as number) << 24) | ((parts[1] as number) << 16) | ((parts[2] as number) << 8) | (parts[3] as number)) >>> 0;
}

function numberToIp(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** `10.1.2.3/24` → the subnet 10.1.2.0/24; undefined when it is not IPv4 CIDR. */
export function parseCidr(text: string): Subnet | undefined {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(text.trim());
  if (!match) return undefined;
  const prefix = Number(match[2]);
  if (prefix > 32) return undefined;
  try {
    return { network: numberToIp((ipToNumber(match[1] as string) & mask(prefix)) >>> 0), prefix };
  } catch {
    return undefined;
  }
}

export function subnetOf(address: string, prefix: number): Subnet {
  return { network: numberToIp((ipToNumber(address) & mask(prefix)) >>> 0), prefix };
}

export function formatSubnet(subnet: Subnet): string {
  return `${subnet.network}/${subnet.prefix}`;
}

export function broadcastOf(subnet: Subnet): string {
  return numberToIp((ipToNumber(subnet.network) | ~mask(subnet.prefix)) >>> 0);
}

export function contains(subnet: Subnet, address: string): boolean {
  return (ipToNumber(address) & mask(subnet.prefix)) >>> 0 === ipToNumber(subnet.network);
}

/** Whether `inner` lies wholly within `outer`. */
export function within(inner: Subnet, outer: Subnet): boolean {
  return inner.prefix >= outer.prefix && contains(outer, inner.network);
}

/** The host addresses of a subnet (without its network and broadcast addresses, except in /31 and /32). */
export function hostAddresses(subnet: Subnet): string[] {
  const first = ipToNumber(subnet.network);
  const size = 2 ** (32 - subnet.prefix);
  if (size <= 2) return Array.from({ length: size }, (_, i) => numberToIp(first + i));
  return Array.from({ length: size - 2 }, (_, i) => numberToIp(first + i + 1));
}
