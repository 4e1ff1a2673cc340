import { describe, expect, it } from 'vitest';
import { parseBrokerAddresses } from './broker-addresses.ts';

describe('--broker', () => {
  it('takes one address or several, comma-separated, without repeats', () => {
    expect(parseBrokerAddresses('broker:7443')).toEqual(['broker:7443']);
    expect(parseBrokerAddresses('b1:7443, b2:7443,b1:7443,')).toEqual(['b1:7443', 'b2:7443']);
  });

  it('refuses an entry that is not host:port, or none at all', () => {
    expect(() => parseBrokerAddresses('b1:7443,b2')).toThrow(/--broker "b2" is not host:port/);
    expect(() => parseBrokerAddresses(' , ')).toThrow(/names no broker/);
  });
});
