import { describe, expect, it } from 'vitest';
import { ContainerEvents } from './container-events.ts';

const event = (action: string, at: number, exitCode?: number) => ({
  time_unix_ms: at,
  type: 'container',
  action,
  id: 'abcdef0123456789',
  name: 'web',
  image: 'nginx',
  ...(exitCode === undefined ? {} : { exit_code: exitCode }),
  attributes: {},
});

describe('the container events of the index', () => {
  it('counts failures and the starts that followed them, once each even when replayed', () => {
    const events = new ContainerEvents();
    const now = 10_000_000;
    for (const [e, at] of [
      [event('start', 1), now - 5000],
      [event('die', 2, 7), now - 4000],
      [event('start', 3), now - 3000],
      [event('die', 4, 0), now - 2000],
      [event('die', 4, 0), now - 1000],
    ] as const)
      events.take('h1', e, at);
    expect(events.recentFailures('h1', 'host-1', 'abcdef012345')).toEqual([
      { task: 'web', task_id: 'abcdef012345', node: 'host-1', state: 'exited', error: 'exited with code 7', exit_code: 7, timestamp_unix_ms: now - 4000 },
    ]);
    expect(events.restarts('h1', 'abcdef012345', now)).toEqual({ last_hour: 1, last_week: 1 });
    expect(events.stateSince('h1', 'abcdef012345', now - 2500)).toBe('exited');
    expect(events.stateSince('h1', 'abcdef012345', now)).toBeUndefined();
    events.forget('h1');
    expect(events.recentFailures('h1', 'host-1', 'abcdef012345')).toEqual([]);
  });
});
