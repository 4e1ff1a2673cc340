import { describe, expect, it } from 'vitest';
import { LineCollector, MAX_TOTAL_CHARS } from './line-collector.ts';

describe('LineCollector', () => {
  it('keeps the newest lines and names the size limit when size cut them', () => {
    const collector = new LineCollector({ timestamps: false, contains: undefined, stream: 'both', maxLines: 5000 });
    const long = 'x'.repeat(4000);
    const total = Math.ceil(MAX_TOTAL_CHARS / long.length) + 10;
    for (let i = 0; i < total; i++) collector.add('stdout', `${i} ${long}`);
    expect(collector.lines.length).toBeLessThan(total);
    expect(collector.lines.at(-1)?.text.startsWith(`${total - 1} `)).toBe(true);
    expect(collector.truncatedReason).toMatch(/capped at \d+ characters/);
  });

  it('names the line limit when the line limit cut', () => {
    const collector = new LineCollector({ timestamps: false, contains: undefined, stream: 'both', maxLines: 3 });
    for (let i = 0; i < 5; i++) collector.add('stdout', `line ${i}`);
    expect(collector.lines.map((l) => l.text)).toEqual(['line 2', 'line 3', 'line 4']);
    expect(collector.truncatedReason).toMatch(/^only the last 3 lines are kept/);
  });
});
