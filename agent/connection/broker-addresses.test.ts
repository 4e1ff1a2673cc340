import { describe, expect, it } from 'vitest';
import { nextAddressIndex, parseBrokerAddresses } from './broker-addresses.ts';

describe('--broker', () => {
  it('takes one address or several, comma-separated, without repeats', () => {
    expect(parseBrokerAddresses('broker:7443')).toEqual(['broker:7443']);
    expect(parseBrokerAddresses('b1:7443, b2:7443,b1:7443,')).toEqual(['b1:7443', 'b2:7443']);
  });

  it("dials another broker after a failure, any of the others: a dead broker's agents spread over the rest", () => {
    const choices = (index: number, count: number) => new Set([0, 0.34, 0.5, 0.67, 0.99].map((r) => nextAddressIndex(index, count, () => r)));
    expect(choices(2, 3)).toEqual(new Set([0, 1]));
    expect(choices(0, 3)).toEqual(new Set([1, 2]));
    expect(choices(0, 2)).toEqual(new Set([1]));
    expect(choices(1, 2)).toEqual(new Set([0]));
    expect(choices(0, 1)).toEqual(new Set([0]));
  });

  it('refuses an entry that is not host:port, or none at all', () => {
    expect(() => parseBrokerAddresses('b1:7443,b2')).toThrow(/--broker "b2" is not host:port/);
    expect(() => parseBrokerAddresses(' , ')).toThrow(/names no broker/);
  });
});
