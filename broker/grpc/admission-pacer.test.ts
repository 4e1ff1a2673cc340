import { describe, expect, it } from 'vitest';
import { AdmissionPacer } from './admission-pacer.ts';

describe('admission pacing', () => {
  it('admits a burst at once, then gives the excess a slot each, one admission interval apart', () => {
    const pacer = new AdmissionPacer({ burst: 10, perSecond: 100 }, 0);
    const waits = Array.from({ length: 210 }, () => pacer.admit(0));
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    // 200 agents past the burst are spread one slot (10 ms) apart over two seconds.
    expect(waits.slice(10, 13)).toEqual([10, 20, 30]);
    expect(waits.at(-1)).toBe(2000);
  });

  it('keeps the slots it promised: a newcomer waits behind those already waiting', () => {
    const pacer = new AdmissionPacer({ burst: 1, perSecond: 10 }, 0);
    expect(pacer.admit(0)).toBe(0);
    expect(pacer.admit(0)).toBe(100);
    expect(pacer.admit(0)).toBe(200);
    // At 100 ms the second arrival takes its slot; a newcomer then comes after the third.
    expect(pacer.admit(100)).toBe(200);
  });

  it('takes a burst again after a quiet spell', () => {
    const pacer = new AdmissionPacer({ burst: 3, perSecond: 10 }, 0);
    for (let i = 0; i < 6; i++) pacer.admit(0);
    expect([pacer.admit(10_000), pacer.admit(10_000), pacer.admit(10_000), pacer.admit(10_000)]).toEqual([0, 0, 0, 100]);
  });

  it('promises no slot past the longest wait it is allowed, and gives that slot to the next arrival', () => {
    const pacer = new AdmissionPacer({ burst: 1, perSecond: 10 }, 0);
    expect(pacer.admit(0, 150)).toBe(0);
    expect(pacer.admit(0, 150)).toBe(100);
    expect(pacer.admit(0, 150)).toBeUndefined();
    expect(pacer.admit(50, 150)).toBe(150);
  });

  it('spreads a fleet sent away at shutdown over the time the rate needs to take it back', () => {
    const pacer = new AdmissionPacer({ burst: 10, perSecond: 100 });
    const waits = pacer.spread(1000);
    expect(Math.max(...waits)).toBeLessThan(10_000);
    const seconds = new Set(waits.map((ms) => Math.floor(ms / 1000)));
    expect(seconds.size).toBe(10);
  });
});
