import { describe, expect, it } from 'vitest';
import { EdgeChain, type EdgeStep } from './edge-chain.ts';

describe('EdgeChain', () => {
  it('runs its steps in order, each handing on what it learnt, then the last', async () => {
    const seen: string[] = [];
    const tag =
      (name: string): EdgeStep<string[]> =>
      async (trail, next) => {
        seen.push(name);
        await next([...trail, name]);
      };
    const count: EdgeStep<string[], number> = async (trail, next) => next(trail.length);
    let last: number | undefined;
    await EdgeChain.start<string[]>()
      .use(tag('host'))
      .use(tag('auth'))
      .use(count)
      .end(async (n) => {
        last = n;
      })([]);
    expect(seen).toEqual(['host', 'auth']);
    expect(last).toBe(2);
  });

  it('stops at a step that answers by itself', async () => {
    const reached: string[] = [];
    const refuse: EdgeStep<string> = async (request) => {
      reached.push(`refused ${request}`);
    };
    await EdgeChain.start<string>()
      .use(refuse)
      .use(async (request, next) => {
        reached.push('after');
        await next(request);
      })
      .end(async () => {
        reached.push('last');
      })('GET /');
    expect(reached).toEqual(['refused GET /']);
  });

  it('waits for each step, so a step may act once the rest has answered', async () => {
    const order: string[] = [];
    await EdgeChain.start<string>()
      .use(async (request, next) => {
        await next(request);
        order.push('outer after');
      })
      .end(async () => {
        await new Promise((resolve) => setImmediate(resolve));
        order.push('last');
      })('GET /');
    expect(order).toEqual(['last', 'outer after']);
  });
});
