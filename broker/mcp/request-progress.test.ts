import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestProgress } from './request-progress.ts';

describe('the progress of a call answered in its request', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('passes on what the call reports and, while it says nothing, that it still runs, each value greater than the last', () => {
    const sent: { progress: number; total: number | undefined; message: string }[] = [];
    const progress = new RequestProgress((value, total, message) => sent.push({ progress: value, total, message }), 50_000);
    progress.report(0, 2, 'sent to 2 hosts');
    progress.report(1, 2, 'web-1: answered');
    vi.advanceTimersByTime(50_000);
    vi.advanceTimersByTime(50_000);
    progress.report(1, 2, 'web-2: retried');
    vi.advanceTimersByTime(50_000);
    progress.stop();
    vi.advanceTimersByTime(200_000);
    expect(sent.map((s) => s.message)).toEqual([
      'sent to 2 hosts',
      'web-1: answered',
      'still running after 50 s',
      'still running after 100 s',
      'web-2: retried',
      'still running after 150 s',
    ]);
    const values = sent.map((s) => s.progress);
    expect(values[0]).toBe(0);
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1] ?? 0);
    expect(values.every((value) => value < 2)).toBe(true);
    expect(sent.every((s) => s.total === 2)).toBe(true);
  });

  it('says a call that reports nothing still runs, with no total', () => {
    const sent: { progress: number; total: number | undefined }[] = [];
    const progress = new RequestProgress((value, total) => sent.push({ progress: value, total }), 1000);
    vi.advanceTimersByTime(3000);
    progress.stop();
    expect(sent).toEqual([
      { progress: 0, total: undefined },
      { progress: 0.5, total: undefined },
      { progress: 0.75, total: undefined },
    ]);
  });
});
