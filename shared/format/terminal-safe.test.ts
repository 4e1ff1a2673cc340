import { describe, expect, it } from 'vitest';
import { terminalCell, terminalSafe } from './terminal-safe.ts';

describe('terminal-safe text', () => {
  it('spells out escapes, carriage returns, DEL and C1 controls, keeping newlines and tabs', () => {
    expect(terminalSafe('a\u001b[2J\rb\u007f\u009b31m\nc\td')).toBe('a\\u001b[2J\\u000db\\u007f\\u009b31m\nc\td');
  });

  it('keeps JSON the same JSON', () => {
    const value = { label: '\u001b]0;owned\u0007\u009b2J' };
    const printed = terminalSafe(JSON.stringify(value));
    expect(printed).not.toMatch(/\p{Cc}/u);
    expect(JSON.parse(printed)).toEqual(value);
  });

  it('keeps a cell on one line', () => {
    expect(terminalCell('web\nfake-row\tx')).toBe('web\\u000afake-row\\u0009x');
  });
});
