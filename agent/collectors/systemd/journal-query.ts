import type { journalQuery, journalSearch } from '../../../shared/domains/systemd/journal-actions.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { toUnixSeconds } from '../../engine/engine-time.ts';
import { type JournalLine, journalLine, lineUnixMs } from './journal-entry.ts';
import type { JournalReader } from './journal-reader.ts';

/** All lines of one answer together stay under this many characters of text: an answer a model takes whole. */
const MAX_TOTAL_CHARS = 48_000;
/** journal_search stops counting here: a count that large already answers "did it log this". */
export const SEARCH_COUNT_LIMIT = 100_000;
const DAY_S = 86_400;

/** journal_query and journal_search: the host's journal, newest first. */
export function registerJournalActions(dispatcher: Dispatcher, journal: JournalReader): void {
  dispatcher.register<typeof journalQuery>('systemd.journal_query', async (params, context) => {
    const limit = params.lines ?? 50;
    const lines: JournalLine[] = [];
    let chars = 0;
    let cursor = '';
    let more = false;
    let truncated: string | undefined;
    await journal.read(
      {
        unit: params.unit,
        priority: params.priority,
        sinceUnixS: params.since === undefined ? undefined : toUnixSeconds(params.since, 'since'),
        untilUnixS: params.until === undefined ? undefined : toUnixSeconds(params.until, 'until'),
        grep: params.grep,
        boot: params.boot,
        olderThan: params.page,
      },
      // One more than asked: whether it comes tells whether older lines exist.
      limit + 1,
      context.signal,
      (entry) => {
        const read = journalLine(entry);
        if (lines.length >= limit || chars + read.line.text.length > MAX_TOTAL_CHARS) {
          more = true;
          if (lines.length < limit) truncated = `the answer is capped at ${MAX_TOTAL_CHARS} characters of text: next_page reads on`;
          return false;
        }
        if (read.cut) truncated ??= 'messages longer than 4096 characters were cut';
        lines.push(read.line);
        chars += read.line.text.length;
        cursor = read.cursor;
        return true;
      },
    );
    return {
      payload: {
        lines,
        count: lines.length,
        next_page: more && cursor ? cursor : null,
        ...(truncated ? { truncated_reason: truncated } : {}),
      },
    };
  });

  dispatcher.register<typeof journalSearch>('systemd.journal_search', async (params, context) => {
    const keep = params.lines ?? 3;
    const lines: JournalLine[] = [];
    let newest: JournalLine | undefined;
    let matched = 0;
    await journal.read(
      {
        grep: params.grep,
        unit: params.unit,
        priority: params.priority,
        sinceUnixS: params.since === undefined ? Date.now() / 1000 - DAY_S : toUnixSeconds(params.since, 'since'),
      },
      undefined,
      context.signal,
      (entry) => {
        matched += 1;
        if (newest && lines.length >= keep) return matched < SEARCH_COUNT_LIMIT;
        const { line } = journalLine(entry);
        newest ??= line;
        if (lines.length < keep) lines.push(line);
        return matched < SEARCH_COUNT_LIMIT;
      },
    );
    return {
      payload: {
        matched,
        matched_all: matched < SEARCH_COUNT_LIMIT,
        newest_unix_ms: newest ? lineUnixMs(newest) : null,
        newest_line: newest?.text ?? null,
        lines,
      },
    };
  });
}
