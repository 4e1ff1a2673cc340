import { describe, expect, it } from 'vitest';
import { FleetError, toFleetError } from './fleet-error.ts';

describe('toFleetError', () => {
  it('tells a cancelled call from one past its deadline', () => {
    const cancelled = new AbortController();
    cancelled.abort();
    expect(toFleetError(cancelled.signal.reason).code).toBe('cancelled');
    expect(toFleetError(new DOMException('gone', 'TimeoutError')).code).toBe('deadline_exceeded');
  });

  it('keeps a FleetError as thrown, and makes anything else internal', () => {
    const thrown = new FleetError('conflict', 'changed meanwhile');
    expect(toFleetError(thrown)).toBe(thrown);
    expect(toFleetError(new Error('boom'))).toMatchObject({ code: 'internal', message: 'boom' });
    expect(toFleetError('text')).toMatchObject({ code: 'internal', message: 'text' });
  });
});
