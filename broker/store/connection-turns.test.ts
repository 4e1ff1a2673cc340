import { describe, expect, it } from 'vitest';
import { ConnectionTurns } from './connection-turns.ts';

describe('turns of the store connections', () => {
  it('hands each connection on to the caller that waited longest, and none to one that gave up', async () => {
    const turns = new ConnectionTurns(2, 100, 'the store');
    const order: string[] = [];
    await turns.take();
    await turns.take();
    const waiter = (name: string) =>
      turns.take().then(
        () => order.push(name),
        (error: Error) => order.push(`${name} gave up: ${error.message}`),
      );
    const first = waiter('first');
    const late = waiter('late');
    expect(turns.queued).toBe(2);
    turns.give();
    await first;
    expect(order).toEqual(['first']);
    await late;
    expect(order).toEqual(['first', 'late gave up: the store is busy: a statement waited 0.1 s for one of its 2 connections']);
    // The one that gave up is skipped: the next turn is the next waiter's, and then the connection is free.
    const next = waiter('next');
    turns.give();
    await next;
    turns.give();
    turns.give();
    await turns.take();
    await turns.take();
    expect(order).toEqual(['first', 'late gave up: the store is busy: a statement waited 0.1 s for one of its 2 connections', 'next']);
    expect(turns.queued).toBe(0);
  });

  it('gives the next turn to a caller that goes ahead, before those that waited, in the order such callers came', async () => {
    const turns = new ConnectionTurns(1, 1000, 'the store');
    const order: string[] = [];
    await turns.take();
    const waiter = (name: string, ahead = false) => turns.take(ahead).then(() => order.push(name));
    const waited = [waiter('reader 1'), waiter('reader 2'), waiter('lease', true), waiter('second lease', true), waiter('reader 3')];
    for (let turn = 0; turn < waited.length; turn++) {
      turns.give();
      await waited[[2, 3, 0, 1, 4][turn] as number];
    }
    expect(order).toEqual(['lease', 'second lease', 'reader 1', 'reader 2', 'reader 3']);
  });
});
