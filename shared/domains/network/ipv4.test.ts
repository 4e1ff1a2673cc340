import { describe, expect, it } from 'vitest';
import { broadcastOf, contains, hostAddresses, parseCidr, subnetOf, within } from './ipv4.ts';

describe('IPv4 subnets', () => {
  it('normalizes a CIDR to its network and refuses what is not one', () => {
    expect(parseCidr('10.1.2.77/24')).toEqual({ network: '10.1.2.0', prefix: 24 });
    expect(parseCidr('10.1.2.0/33')).toBeUndefined();
    expect(parseCidr('10.1.2.300/24')).toBeUndefined();
    expect(parseCidr('fe80::1/64')).toBeUndefined();
  });

  it('tells broadcast, membership and nesting', () => {
    const lan = subnetOf('192.168.7.20', 22);
    expect(lan).toEqual({ network: '192.168.4.0', prefix: 22 });
    expect(broadcastOf(lan)).toBe('192.168.7.255');
    expect(contains(lan, '192.168.5.1')).toBe(true);
    expect(contains(lan, '192.168.8.1')).toBe(false);
    expect(within({ network: '192.168.6.0', prefix: 24 }, lan)).toBe(true);
    expect(within({ network: '192.168.0.0', prefix: 16 }, lan)).toBe(false);
  });

  it('lists host addresses without network and broadcast', () => {
    const hosts = hostAddresses({ network: '10.0.0.0', prefix: 29 });
    expect(hosts).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
  });
});
