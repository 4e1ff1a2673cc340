import type { z } from 'zod';
import type { journalLineShape } from '../../../shared/domains/systemd/journal-actions.ts';
import { PRIORITIES } from '../../../shared/domains/systemd/systemd-head.ts';

export type JournalLine = z.infer<typeof journalLineShape>;

/** A message longer than this is cut: one line never fills an answer. */
export const MAX_MESSAGE_CHARS = 4096;

/** The fields journal_query reads of an entry (journalctl --output-fields; the cursor and time always come). */
export const ENTRY_FIELDS = ['MESSAGE', 'PRIORITY', '_SYSTEMD_UNIT', 'UNIT', 'USER_UNIT', 'SYSLOG_IDENTIFIER', '_COMM', '_PID'];

const decoder = new TextDecoder();

/**
 * A field as journalctl's JSON gives it: a string, an array of bytes (a value
 * that is not valid UTF-8 or holds control characters), null (too large), or an
 * array of those when the entry holds the field more than once (the first counts).
 */
function text(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((byte) => typeof byte === 'number')) return decoder.decode(Uint8Array.from(value as number[]));
  if (Array.isArray(value) && value.length > 0) return text(value[0]);
  return null;
}

/**
 * The unit a line is about: the unit that wrote it, except for the service
 * manager's own lines ("Started web.service", "web.service: Failed with
 * result 'exit-code'"), which it writes from init.scope naming the unit they
 * concern in UNIT (or USER_UNIT for a user manager); journalctl -u returns
 * those with the unit's own lines, so they carry the unit they were asked for.
 */
function subjectUnit(entry: Record<string, unknown>): string | null {
  const writer = text(entry._SYSTEMD_UNIT);
  const subject = text(entry.UNIT) ?? text(entry.USER_UNIT);
  if (subject && (writer === null || writer === 'init.scope')) return subject;
  return writer ?? subject;
}

/** One journal entry of `journalctl --output=json` as a line of an answer; its cursor pages on from it. */
export function journalLine(entry: Record<string, unknown>): { line: JournalLine; cursor: string; cut: boolean } {
  const micros = Number(text(entry.__REALTIME_TIMESTAMP) ?? 0);
  const priority = Number(text(entry.PRIORITY) ?? Number.NaN);
  const pid = Number(text(entry._PID) ?? Number.NaN);
  let message = text(entry.MESSAGE) ?? '';
  const cut = message.length > MAX_MESSAGE_CHARS;
  if (cut) message = `${message.slice(0, MAX_MESSAGE_CHARS)}…`;
  return {
    line: {
      timestamp: new Date(Math.floor(micros / 1000)).toISOString(),
      unit: subjectUnit(entry),
      priority: Number.isInteger(priority) ? (PRIORITIES[priority] ?? null) : null,
      identifier: text(entry.SYSLOG_IDENTIFIER) ?? text(entry._COMM),
      pid: Number.isInteger(pid) ? pid : null,
      text: message,
    },
    cursor: text(entry.__CURSOR) ?? '',
    cut,
  };
}

/** The unix milliseconds of a line's timestamp. */
export function lineUnixMs(line: JournalLine): number {
  return Date.parse(line.timestamp);
}
