import type { AlertPart, HostAlert } from '../domain-parts.ts';
import { serviceList, serviceStatus } from './service-actions.ts';

/** More failed units than this on one host make one row that counts the rest (each listed one costs a read of its state). */
const MAX_LISTED = 10;
/** Enough of a unit's journal to hold what it wrote as it failed. */
const JOURNAL_LINES = 20;

/**
 * A host's failed units in `alerts`: each a warning with its sub state, since
 * when it failed, and the calls that say why (its state, then its newest
 * journal lines).
 */
export const failedUnitsAlert: AlertPart = {
  async examine(host) {
    if (!host.collectors.some((collector) => collector.name === 'systemd' && collector.available)) return { ran: false, alerts: [] };
    const answer = await host.run(serviceList, { state: 'failed' });
    if (!answer.payload) return { ran: true, alerts: [], failed: ['systemd'] };
    const failed = answer.payload.units.filter((unit) => unit.active_state === 'failed');
    const alerts = await Promise.all(
      failed.slice(0, MAX_LISTED).map(async (unit): Promise<HostAlert> => {
        // service_list does not say since when; the unit's own state does (no journal lines needed for that).
        const status = await host.run(serviceStatus, { name: unit.name, lines: 0 });
        const since = status.payload?.since_unix_ms ?? null;
        return {
          kind: 'failed_unit',
          subject: unit.name,
          state: 'warning',
          detail: status.payload?.sub_state ?? unit.sub_state,
          since_unix_ms: since,
          next: [
            { tool: 'service_status', arguments: { name: unit.name } },
            // Its newest lines, not those since it failed: what a unit writes before it fails is why.
            { tool: 'journal_query', arguments: { unit: unit.name, lines: JOURNAL_LINES } },
          ],
        };
      }),
    );
    const more = failed.length - MAX_LISTED;
    if (more > 0) {
      alerts.push({
        kind: 'failed_unit',
        subject: `${more} more units`,
        state: 'warning',
        detail: 'failed',
        since_unix_ms: null,
        next: [{ tool: 'service_list', arguments: { state: 'failed' } }],
      });
    }
    return { ran: true, alerts };
  },
};
