import { describe, expect, it } from 'vitest';
import { CoalescedReads } from './coalesced-reads.ts';

describe('reads of one turn made as one', () => {
  it('answers every caller of a turn from one read of their keys, each key once, and a missing key as undefined', async () => {
    const reads: string[][] = [];
    const rows = new CoalescedReads<string, number>(async (keys) => {
      reads.push(keys);
      return new Map(keys.filter((key) => key !== 'none').map((key) => [key, key.length]));
    });
    const answers = await Promise.all([rows.read('a'), rows.read('bb'), rows.read('a'), rows.read('none')]);
    expect(answers).toEqual([1, 2, 1, undefined]);
    expect(reads).toEqual([['a', 'bb', 'none']]);
    expect(await rows.read('ccc')).toBe(3);
    expect(reads).toEqual([['a', 'bb', 'none'], ['ccc']]);
  });

  it('reads at most 500 keys at once, and fails the callers of a read that fails', async () => {
    const sizes: number[] = [];
    const rows = new CoalescedReads<number, number>(async (keys) => {
      sizes.push(keys.length);
      if (keys.includes(1200)) throw new Error('store down');
      return new Map(keys.map((key) => [key, key]));
    });
    const answers = await Promise.allSettled(Array.from({ length: 1201 }, (_, key) => rows.read(key)));
    expect(sizes).toEqual([500, 500, 201]);
    expect(answers.slice(0, 1000).every((answer) => answer.status === 'fulfilled')).toBe(true);
    expect(answers.slice(1000).every((answer) => answer.status === 'rejected')).toBe(true);
  });
});
