import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TaskStatusPump } from './task-status-pump.ts';

describe('TaskStatusPump', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('publishes the first status at once and then only the latest one per interval', () => {
    const published: string[] = [];
    const pump = new TaskStatusPump(1000, (message) => published.push(message));
    for (let done = 0; done <= 500; done++) pump.push(`${done} of 500 hosts answered`);
    expect(published).toEqual(['0 of 500 hosts answered']);
    vi.advanceTimersByTime(1000);
    expect(published).toEqual(['0 of 500 hosts answered', '500 of 500 hosts answered']);
    vi.advanceTimersByTime(5000);
    expect(published).toHaveLength(2);
    pump.push('later');
    expect(published.at(-1)).toBe('later');
  });

  it('drops what is pending once stopped', () => {
    const published: string[] = [];
    const pump = new TaskStatusPump(1000, (message) => published.push(message));
    pump.push('first');
    pump.push('second');
    pump.stop();
    vi.advanceTimersByTime(5000);
    expect(published).toEqual(['first']);
  });
});
