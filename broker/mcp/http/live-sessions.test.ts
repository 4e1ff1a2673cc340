import { describe, expect, it } from 'vitest';
import { type LiveSession, LiveSessions } from './live-sessions.ts';

/** A session of `identityId`: what LiveSessions reads of it is its identity. */
function live(identityId: string): LiveSession {
  return { identityId, lastUsed: 0, shared: false } as unknown as LiveSession;
}

describe('LiveSessions', () => {
  it('counts the sessions of each identity, those being opened included, until they are released', () => {
    const sessions = new LiveSessions();
    sessions.add('s1', live('a'), 1000);
    sessions.add('s2', live('a'), 1000);
    sessions.add('s3', live('b'), 1000);
    const release = sessions.reserve('a', 1000);
    expect([sessions.countOf('a'), sessions.countOf('b'), sessions.countOf('c')]).toEqual([3, 1, 0]);
    release();
    release();
    expect(sessions.countOf('a')).toBe(2);
    expect(sessions.delete('s1')?.identityId).toBe('a');
    expect(sessions.delete('s1')).toBeUndefined();
    expect(sessions.idsOf('a')).toEqual(['s2']);
    expect(sessions.size).toBe(2);
  });

  it('names the identities whose expiry passed, as their last request told it', () => {
    const sessions = new LiveSessions();
    sessions.add('s1', live('short'), 1000);
    sessions.add('s2', live('long'), 5000);
    expect(sessions.expiredBy(2000)).toEqual(['short']);
    // Extended since: a request proved a later expiry.
    sessions.expires('short', 9000);
    expect(sessions.expiredBy(2000)).toEqual([]);
    sessions.delete('s2');
    expect(sessions.expiredBy(6000)).toEqual([]);
  });
});
