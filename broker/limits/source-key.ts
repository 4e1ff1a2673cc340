import { isIPv6 } from 'node:net';

/** The leading zero-filled groups of an IPv6 address, `count` of them (the zone index dropped). */
function ipv6Groups(address: string, count: number): string[] {
  const [head = '', tail] = address.replace(/%.*$/, '').split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.slice(0, count).map((group) => (Number.parseInt(group, 16) || 0).toString(16));
}

/**
 * Whom a connection counts against, for limits kept per source: an IPv4
 * address as it is (an IPv4-mapped IPv6 one too), an IPv6 address by its /64
 * prefix, since a single host is handed a whole /64 and can dial from any
 * address in it.
 */
export function sourceKey(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  if (!isIPv6(address.replace(/%.*$/, ''))) return address;
  return `${ipv6Groups(address, 4).join(':')}::/64`;
}
