import { describe, expect, it } from 'vitest';
import { lateNote } from './call-audit.ts';

describe('lateNote', () => {
  it('says a host answered past the deadline only when it did, and after a cancel when the client cancelled', () => {
    expect(lateNote('vm', undefined, 16_000, 15_000)).toBe("vm answered ok after 16000 ms, past the call's 15000 ms deadline");
    expect(lateNote('vm', undefined, 10_646, 15_000, true)).toBe(
      'vm answered ok after 10646 ms, after its client had cancelled the call (its deadline was 15000 ms)',
    );
    expect(lateNote('vm', 'collector_failed', 16_000, 15_000, true)).toBe("vm answered collector_failed after 16000 ms, past the call's 15000 ms deadline");
  });
});
