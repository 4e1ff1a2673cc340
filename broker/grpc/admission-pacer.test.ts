import { describe, expect, it } from 'vitest';
import { AdmissionPacer, spreadReturns } from './admission-pacer.ts';

/** `count` connections named `source-1`, `source-2`… put in `source`'s line at `nowMs`. */
function arrive(pacer: AdmissionPacer<string>, source: string, count: number, nowMs = 0): void {
  for (let i = 1; i <= count; i++) pacer.enqueue(source, `${source}-${i}`, nowMs);
}

describe('admission pacing', () => {
  it('takes a burst at once, then one connection per admission interval', () => {
    const pacer = new AdmissionPacer<string>({ burst: 10, perSecond: 100 }, 0);
    arrive(pacer, 'a', 210);
    const first = pacer.due(0);
    expect(first.due).toHaveLength(10);
    // The next turn is one interval (10 ms) away, and each interval gives one.
    expect(first.nextInMs).toBe(10);
    expect(pacer.due(10).due).toEqual(['a-11']);
    expect(pacer.due(30).due).toEqual(['a-12', 'a-13']);
    // The rest, each asked for when the pacer said its turn comes: 200 past the burst take two seconds.
    let nowMs = 30;
    let next = pacer.due(nowMs).nextInMs;
    while (next !== undefined) {
      nowMs += next;
      next = pacer.due(nowMs).nextInMs;
    }
    expect(nowMs).toBe(2000);
    expect(pacer.waiting).toBe(0);
  });

  it('gives turns round the sources: one that dials once waits behind no more than one of a source that dialled a hundred times', () => {
    const pacer = new AdmissionPacer<string>({ burst: 1, perSecond: 10 }, 0);
    arrive(pacer, 'flood', 100);
    arrive(pacer, 'agent', 1);
    expect(pacer.due(0).due).toEqual(['flood-1']);
    expect(pacer.due(100).due).toEqual(['agent-1']);
    expect(pacer.due(200).due).toEqual(['flood-2']);
  });

  it('keeps each source in the order its connections came', () => {
    const pacer = new AdmissionPacer<string>({ burst: 6, perSecond: 1 }, 0);
    arrive(pacer, 'a', 3);
    arrive(pacer, 'b', 3);
    expect(pacer.due(0).due).toEqual(['a-1', 'b-1', 'a-2', 'b-2', 'a-3', 'b-3']);
  });

  it('spends no turn on a connection that left its line: the next one takes it', () => {
    const pacer = new AdmissionPacer<string>({ burst: 1, perSecond: 10 }, 0);
    arrive(pacer, 'a', 3);
    expect(pacer.due(0).due).toEqual(['a-1']);
    expect(pacer.withdraw('a', 'a-2')).toBe(true);
    expect(pacer.withdraw('a', 'a-2')).toBe(false);
    expect(pacer.waiting).toBe(1);
    expect(pacer.due(100).due).toEqual(['a-3']);
    // A line emptied by withdrawals leaves the round.
    arrive(pacer, 'b', 1);
    pacer.withdraw('b', 'b-1');
    expect(pacer.due(1000)).toEqual({ due: [], nextInMs: undefined });
  });

  it('takes a burst again after a quiet spell', () => {
    const pacer = new AdmissionPacer<string>({ burst: 3, perSecond: 10 }, 0);
    arrive(pacer, 'a', 6);
    pacer.due(0);
    pacer.due(300);
    arrive(pacer, 'b', 4, 10_000);
    expect(pacer.due(10_000).due).toEqual(['b-1', 'b-2', 'b-3']);
    expect(pacer.due(10_000).nextInMs).toBe(100);
  });

  it('gives every turn it owes when its turn comes late, as on an event loop busy for seconds', () => {
    const pacer = new AdmissionPacer<string>({ burst: 10, perSecond: 100 }, 0);
    arrive(pacer, 'a', 1000);
    expect(pacer.due(0).due).toHaveLength(10);
    // Asked again 5 s later: 500 turns were owed, not a burst of 10.
    expect(pacer.due(5000).due).toHaveLength(500);
    // As many as there is room for, the rest kept for the next turn.
    expect(pacer.due(5000, 0).due).toHaveLength(0);
    expect(pacer.due(5010, 100).due).toHaveLength(1);
  });

  it('spreads a fleet sent away at shutdown over the time the rate needs to take it back', () => {
    const waits = spreadReturns(1000, { burst: 10, perSecond: 100 });
    expect(Math.max(...waits)).toBeLessThan(10_000);
    const seconds = new Set(waits.map((ms) => Math.floor(ms / 1000)));
    expect(seconds.size).toBe(10);
  });
});
