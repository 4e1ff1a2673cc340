import { describe, expect, it } from 'vitest';
import type { Action } from '../../catalog/action.ts';
import type { CheckedHost } from '../domain-parts.ts';
import { failedUnitsAlert } from './failed-units-alert.ts';

const FAILED_AT = Date.UTC(2026, 0, 2, 3, 4, 5);

/** A host whose systemd collector answers from a list of units (or not at all). */
function host(units: { name: string; sub_state: string }[] | null, available = true): CheckedHost {
  return {
    facts: {},
    collectors: [{ name: 'systemd', available }],
    run: async (action: Action, params: unknown) => {
      if (units === null) return { payload: null, errors: [{ code: 'collector_failed', message: 'no bus', hint: '' }] };
      if (action.tool === 'service_list') {
        const rows = units.map((u) => ({ ...u, description: '', load_state: 'loaded', active_state: 'failed' }));
        return { payload: { units: rows, count: rows.length }, errors: [] } as never;
      }
      const { name } = params as { name: string };
      return { payload: { name, sub_state: 'failed', since_unix_ms: FAILED_AT }, errors: [] } as never;
    },
  };
}

describe('failedUnitsAlert', () => {
  it('makes each failed unit a warning with its sub state, since when, and the calls that say why', async () => {
    const found = await failedUnitsAlert.examine(host([{ name: 'backup.service', sub_state: 'failed' }]));
    expect(found).toEqual({
      ran: true,
      alerts: [
        {
          kind: 'failed_unit',
          subject: 'backup.service',
          state: 'warning',
          detail: 'failed',
          since_unix_ms: FAILED_AT,
          next: [
            { tool: 'service_status', arguments: { name: 'backup.service' } },
            { tool: 'journal_query', arguments: { unit: 'backup.service', lines: 20 } },
          ],
        },
      ],
    });
  });

  it('lists ten and counts the rest in one row that lists them all', async () => {
    const many = Array.from({ length: 13 }, (_, i) => ({ name: `u${i}.service`, sub_state: 'failed' }));
    const found = await failedUnitsAlert.examine(host(many));
    expect(found.alerts).toHaveLength(11);
    expect(found.alerts.at(-1)).toMatchObject({ subject: '3 more units', next: [{ tool: 'service_list', arguments: { state: 'failed' } }] });
  });

  it('runs on no host without systemd, and names the collector of a host whose systemd did not answer', async () => {
    expect(await failedUnitsAlert.examine(host([], false))).toEqual({ ran: false, alerts: [] });
    expect(await failedUnitsAlert.examine(host(null))).toEqual({ ran: true, alerts: [], failed: ['systemd'] });
  });
});
