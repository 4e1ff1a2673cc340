import { describe, expect, it } from 'vitest';
import { sourceKey } from './source-key.ts';

describe('sourceKey', () => {
  it('counts an IPv4 address as itself, mapped into IPv6 or not', () => {
    expect(sourceKey('192.0.2.7')).toBe('192.0.2.7');
    expect(sourceKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
  });

  it('counts every IPv6 address of one /64 as one source, however it is written', () => {
    const key = sourceKey('2001:db8:0:1::1');
    expect(key).toBe('2001:db8:0:1::/64');
    expect(sourceKey('2001:0db8:0000:0001:ffff:1:2:3')).toBe(key);
    expect(sourceKey('2001:db8:0:1:a::%eth0')).toBe(key);
    expect(sourceKey('2001:db8:0:2::1')).not.toBe(key);
    expect(sourceKey('::1')).toBe('0:0:0:0::/64');
  });
});
