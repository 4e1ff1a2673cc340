import { FleetError } from '../../shared/errors/fleet-error.ts';
import { parseDurationMs } from '../../shared/options/values.ts';

/** A time the engine wrote (RFC 3339) as unix ms; null for none, and for the engine's zero time (0001-01-01, "never"). */
export function unixMs(iso: string | undefined): number | null {
  if (!iso || iso.startsWith('0001-')) return null;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/** since / until as the engine takes them (unix seconds), from RFC 3339, unix seconds or a duration ago. */
export function toUnixSeconds(value: string | number, what: string, now = Date.now()): number {
  if (typeof value === 'number') return value;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const parsed = Date.parse(text);
  if (!Number.isNaN(parsed)) return parsed / 1000;
  try {
    return (now - parseDurationMs(text, what)) / 1000;
  } catch {
    throw new FleetError('invalid_argument', `${what} "${value}" is neither a time nor a duration`, {
      hint: 'Use RFC 3339 (2026-11-30T10:00:00Z), unix seconds, or a duration ago such as 10m or 2h.',
    });
  }
}
