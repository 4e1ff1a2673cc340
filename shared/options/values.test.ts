import { describe, expect, it } from 'vitest';
import { formatDurationMs, parseDurationMs, parseHostPort, parseLabels } from './values.ts';

describe('option values', () => {
  it('parses durations with units, alone or combined', () => {
    expect(parseDurationMs('500ms')).toBe(500);
    expect(parseDurationMs('10s')).toBe(10_000);
    expect(parseDurationMs('1h30m')).toBe(5_400_000);
    expect(parseDurationMs('30d')).toBe(30 * 86_400_000);
    expect(() => parseDurationMs('10')).toThrow(/has no unit/);
    expect(() => parseDurationMs('10 parsecs')).toThrow(/is not a duration/);
    expect(formatDurationMs(5_400_000)).toBe('1h30m');
  });

  it('parses labels and refuses what a selector could not express', () => {
    expect(parseLabels('role=db, env=prod')).toEqual({ role: 'db', env: 'prod' });
    expect(parseLabels('')).toEqual({});
    expect(() => parseLabels('role')).toThrow(/is not key=value/);
    expect(() => parseLabels('bad key=x')).toThrow(/not a valid label key/);
    expect(() => parseLabels('k=a,b')).toThrow(/is not key=value/);
  });

  it('splits host:port, including IPv6', () => {
    expect(parseHostPort('broker.example.com:7443', 'x')).toEqual({ host: 'broker.example.com', port: 7443 });
    expect(parseHostPort('[::1]:7443', 'x')).toEqual({ host: '::1', port: 7443 });
    expect(() => parseHostPort('7443', '--broker')).toThrow(/--broker "7443" is not host:port/);
  });
});
