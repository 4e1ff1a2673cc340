import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { AuditOutcome } from '../store/audit-table.ts';

const OUTCOMES: readonly AuditOutcome[] = ['pending', 'ok', 'partial', 'error', 'refused', 'cancelled', 'interrupted'];

export interface AuditQuery {
  limit: number;
  identity?: string;
  tool?: string;
  outcome?: AuditOutcome;
  since?: number;
  until?: number;
}

/** A time bound given as unix ms or an ISO date, or undefined when not given. */
function timeOf(url: URL, name: string): number | undefined {
  const value = url.searchParams.get(name);
  if (value === null || value === '') return undefined;
  const time = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(time)) {
    throw new FleetError('invalid_argument', `${name} must be unix milliseconds or an ISO date, not "${value.slice(0, 64)}"`, {
      hint: `For example ${name}=${Date.now() - 3_600_000} or ${name}=${new Date().toISOString()}.`,
    });
  }
  return time;
}

/**
 * The console's audit filters from `/api/audit`'s query: identity, tool,
 * outcome, a time range (`since` inclusive, `until` exclusive) and how many
 * rows (1–1000, default 100). A value that cannot be a filter is refused with
 * what it should be, rather than ignored.
 */
export function auditQuery(url: URL): AuditQuery {
  const limit = Math.min(Math.max(Number(url.searchParams.get('limit')) || 100, 1), 1000);
  const text = (name: string) => {
    const value = url.searchParams.get(name)?.trim();
    return value ? value.slice(0, 256) : undefined;
  };
  const outcome = text('outcome');
  if (outcome !== undefined && !OUTCOMES.includes(outcome as AuditOutcome)) {
    throw new FleetError('invalid_argument', `outcome must be one of ${OUTCOMES.join(', ')}, not "${outcome.slice(0, 64)}"`, {
      hint: 'Leave outcome out to see every outcome.',
    });
  }
  const since = timeOf(url, 'since');
  const until = timeOf(url, 'until');
  const identity = text('identity');
  const tool = text('tool');
  return {
    limit,
    ...(identity ? { identity } : {}),
    ...(tool ? { tool } : {}),
    ...(outcome ? { outcome: outcome as AuditOutcome } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
  };
}
