import { describe, expect, it } from 'vitest';
import { auditQuery } from './audit-query.ts';

const query = (search: string) => auditQuery(new URL(`http://console/api/audit?${search}`));

describe('the console audit filters', () => {
  it('reads identity, tool, outcome and a time range given as unix ms or an ISO date', () => {
    expect(query('identity=ops&tool=docker_restart&outcome=refused&since=1000&until=2026-12-03T00:00:00Z&limit=50')).toEqual({
      limit: 50,
      identity: 'ops',
      tool: 'docker_restart',
      outcome: 'refused',
      since: 1000,
      until: Date.parse('2026-12-03T00:00:00Z'),
    });
    expect(query('')).toEqual({ limit: 100 });
    expect(query('limit=100000').limit).toBe(1000);
  });

  it('refuses an outcome or a time it cannot filter by, saying what it should be', () => {
    expect(() => query('outcome=maybe')).toThrow(/outcome must be one of pending, ok, partial, error, refused/);
    expect(() => query('since=yesterday')).toThrow(/since must be unix milliseconds or an ISO date/);
  });
});
