import { describe, expect, it } from 'vitest';
import { batchesOf } from './sql-engine.ts';

describe('batchesOf', () => {
  it('keeps every item in order, in full batches and then powers of two', () => {
    const sizes = (n: number) =>
      batchesOf(
        Array.from({ length: n }, (_, i) => i),
        500,
      ).map((batch) => batch.length);
    expect(sizes(0)).toEqual([]);
    expect(sizes(1)).toEqual([1]);
    expect(sizes(500)).toEqual([500]);
    expect(sizes(1137)).toEqual([500, 500, 128, 8, 1]);
    const items = Array.from({ length: 1137 }, (_, i) => i);
    expect(batchesOf(items, 500).flat()).toEqual(items);
  });

  it('makes few batch sizes, whatever the number of items', () => {
    const seen = new Set<number>();
    for (let n = 1; n <= 3000; n++) for (const batch of batchesOf(Array.from({ length: n }), 500)) seen.add(batch.length);
    expect(seen.size).toBeLessThanOrEqual(10);
  });
});
