import { describe, expect, it } from 'vitest';
import { batchesOf, writeInBatches } from './sql-engine.ts';

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

describe('writeInBatches', () => {
  it('lets the event loop run every 50 ms or so of writing, not after every batch', async () => {
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const written: number[][] = [];
    // 20 batches of 10 ms each: 200 ms of writing.
    await writeInBatches(
      Array.from({ length: 100 }, (_, i) => i),
      5,
      async (batch) => {
        const until = performance.now() + 10;
        while (performance.now() < until);
        written.push(batch);
      },
    );
    ticking = false;
    expect(written.flat()).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // About one turn per 5 batches: the loop ran while the write went on, and not 19 times.
    expect(turns).toBeGreaterThanOrEqual(2);
    expect(turns).toBeLessThanOrEqual(6);
  });
});
