import { describe, expect, it } from 'vitest';
import { pageOf } from './resource-page.ts';

describe('pages of a list', () => {
  it('walks every item once, page by page, and refuses a cursor it did not give', () => {
    const all = Array.from({ length: 450 }, (_, i) => i);
    const seen: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = pageOf(all, cursor, 200);
      seen.push(...page.items);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
    expect(pageOf([1, 2], undefined, 200)).toEqual({ items: [1, 2] });
    for (const bad of ['nope', Buffer.from('-5').toString('base64url'), Buffer.from('9999').toString('base64url')]) {
      expect(() => pageOf(all, bad, 200)).toThrow(/cursor/);
    }
  });
});
