import { describe, expect, it } from 'vitest';
import { fullJitterDelayMs } from './backoff.ts';

describe('reconnect backoff', () => {
  it('doubles the ceiling per failure from 0.5 s up to the 30 s cap', () => {
    const ceiling = (failures: number) => fullJitterDelayMs(failures, 500, 30_000, () => 0.999999);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(ceiling)).toEqual([499, 999, 1999, 3999, 7999, 15_999, 29_999, 29_999]);
  });

  it('draws the whole wait at random, so a fleet spreads out', () => {
    expect(fullJitterDelayMs(6, 500, 30_000, () => 0)).toBe(0);
    const waits = Array.from({ length: 1000 }, () => fullJitterDelayMs(7, 500, 30_000));
    const seconds = new Set(waits.map((ms) => Math.floor(ms / 1000)));
    // 1000 agents after a broker restart land across ~30 distinct seconds, not one.
    expect(seconds.size).toBeGreaterThan(20);
    expect(Math.max(...waits)).toBeLessThan(30_000);
  });
});
