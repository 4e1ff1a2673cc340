import { describe, expect, it } from 'vitest';
import { CallProgress, summarize } from './call-progress.ts';

describe('call progress', () => {
  it('grows with every report, chunks included, and never passes the total', () => {
    const seen: { done: number; total: number; message: string }[] = [];
    const progress = new CallProgress({
      tool: 't',
      signal: new AbortController().signal,
      onProgress: (done, total, message) => seen.push({ done, total, message }),
    });
    progress.start(0, 2, 'sent to 2 hosts');
    progress.chunk('a', { n: 1 });
    progress.chunk('a', { n: 2 });
    progress.settled('a: answered');
    progress.chunk('b', { n: 1 });
    progress.settled('b: answered');
    const values = seen.map((s) => s.done);
    expect(values).toEqual([...values].sort((x, y) => x - y));
    expect(new Set(values).size).toBe(values.length);
    expect(seen.at(-1)).toEqual({ done: 2, total: 2, message: 'b: answered' });
    expect(seen[1]?.message).toBe('a: n=1');
  });

  it('summarizes a chunk in one short line, lists by their size and text quoted', () => {
    expect(summarize({ container: 'web', lines: [1, 2, 3] })).toBe('container="web", lines: 3');
    expect(summarize({ text: 'x'.repeat(500) }).length).toBeLessThanOrEqual(160);
  });
});
