import { describe, expect, it } from 'vitest';
import { summarizeSeries } from './series-summary.ts';

const points = (...values: (number | null)[]) => values.map((v, i) => ({ t: i * 60_000, v }));

describe('a series in one line', () => {
  it('gives the latest, min, average and max of the buckets that have a value', () => {
    expect(summarizeSeries(points(10, null, 30, 20))).toEqual({ latest: 20, min: 10, average: 20, max: 30, trend: 'rising' });
  });

  it('names the trend in one word', () => {
    expect(summarizeSeries(points(10, 11, 10, 30, 40, 50)).trend).toBe('rising');
    expect(summarizeSeries(points(80, 70, 60, 20, 15, 10)).trend).toBe('falling');
    expect(summarizeSeries(points(50, 52, 49, 51, 50, 52)).trend).toBe('steady');
    expect(summarizeSeries(points(0, 0, 0)).trend).toBe('steady');
    expect(summarizeSeries(points(5, 90)).trend).toBe('unknown');
  });

  it('says nothing it does not know of a series without samples', () => {
    expect(summarizeSeries(points(null, null))).toEqual({ latest: null, min: null, average: null, max: null, trend: 'unknown' });
  });
});
