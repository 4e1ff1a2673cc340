import { describe, expect, it } from 'vitest';
import { AdmissionPacer } from './admission-pacer.ts';

describe('admission pacing', () => {
  it('admits a burst at once, then tells the excess when to come back instead of refusing it', () => {
    const pacer = new AdmissionPacer({ burst: 10, perSecond: 100 }, 0);
    const waits = Array.from({ length: 210 }, () => pacer.admit(0, () => 0));
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    // 200 agents past the burst are spread one slot (10 ms) apart over two seconds.
    expect(waits.slice(10, 13)).toEqual([10, 20, 30]);
    expect(waits.at(-1)).toBe(2000);
  });

  it('admits agents that come back at their slot', () => {
    const pacer = new AdmissionPacer({ burst: 1, perSecond: 10 }, 0);
    expect(pacer.admit(0)).toBe(0);
    const wait = pacer.admit(0, () => 0);
    expect(wait).toBe(100);
    expect(pacer.admit(wait)).toBe(0);
  });

  it('spreads a fleet sent away at shutdown over the time the rate needs to take it back', () => {
    const pacer = new AdmissionPacer({ burst: 10, perSecond: 100 });
    const waits = pacer.spread(1000);
    expect(Math.max(...waits)).toBeLessThan(10_000);
    const seconds = new Set(waits.map((ms) => Math.floor(ms / 1000)));
    expect(seconds.size).toBe(10);
  });
});
