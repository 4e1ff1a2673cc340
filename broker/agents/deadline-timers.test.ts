import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineTimers } from './deadline-timers.ts';

describe('DeadlineTimers', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('expires every call still waiting at a shared deadline, and none that was removed, with one timer', () => {
    const timers = new DeadlineTimers();
    const deadline = Date.now() + 1000;
    const expired: string[] = [];
    const callbacks = ['a', 'b', 'c'].map((name) => () => expired.push(name));
    for (const callback of callbacks) timers.add(deadline, callback);
    expect(vi.getTimerCount()).toBe(1);
    timers.remove(deadline, callbacks[1] as () => void);
    vi.advanceTimersByTime(999);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'c']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clears the timer once its last call is removed, and keeps other deadlines apart', () => {
    const timers = new DeadlineTimers();
    const expired: string[] = [];
    const early = () => expired.push('early');
    const late = () => expired.push('late');
    timers.add(Date.now() + 100, early);
    timers.add(Date.now() + 500, late);
    expect(vi.getTimerCount()).toBe(2);
    timers.remove(Date.now() + 100, early);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(expired).toEqual(['late']);
  });
});
