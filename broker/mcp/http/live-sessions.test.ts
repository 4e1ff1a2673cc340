import { describe, expect, it } from 'vitest';
import { type LiveSession, LiveSessions } from './live-sessions.ts';

/** A session of `identityId`: what LiveSessions reads of it is its identity, its last use and whether a stream is open. */
function live(identityId: string, lastUsed = 0, streaming = false): LiveSession {
  return { identityId, lastUsed, shared: false, transport: { streaming } } as unknown as LiveSession;
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

  it('offers the session unused the longest to give way, if long enough and with no stream open', () => {
    const sessions = new LiveSessions();
    sessions.add('recent', live('a', 50_000), 1e12);
    sessions.add('old', live('a', 10_000), 1e12);
    sessions.add('older-streaming', live('a', 0, true), 1e12);
    sessions.add('other', live('b', 0), 1e12);
    expect(sessions.reclaimable('a', 100_000, 60_000)).toBe('old');
    expect(sessions.reclaimable('a', 60_000, 60_000)).toBeUndefined();
    expect(sessions.reclaimable('c', 100_000, 60_000)).toBeUndefined();
  });
});
