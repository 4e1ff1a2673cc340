import { open, stat } from 'node:fs/promises';
import type { logTail } from '../../../shared/domains/logs/log-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { allowedPath } from './allowed-path.ts';
import { lastLines, lineOf, MAX_SCAN_BYTES } from './last-lines.ts';

/** A followed file is looked at this often for lines added (and for a rotation that truncated it). */
const FOLLOW_POLL_MS = 200;

/** log_tail: a file's last lines, under the operator's globs, optionally followed for a while as docker_logs follows a container. */
export function registerLogTail(dispatcher: Dispatcher, allows: (path: string) => boolean, log: Logger): void {
  dispatcher.register<typeof logTail>('logs.log_tail', async (params, context) => {
    let path: string;
    try {
      path = await allowedPath(params.path, allows, '--log-paths');
    } catch (error) {
      // The host keeps its own record of what was asked for and refused.
      if (error instanceof FleetError && error.code === 'forbidden') log.warn('log_tail refused a path', { path: params.path, caller: context.caller });
      throw error;
    }
    const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
      throw new FleetError(error.code === 'EACCES' ? 'forbidden' : 'collector_failed', `${path} cannot be opened: ${error.message}`, { collector: 'logs' });
    });
    const followed: Followed = { file, offset: 0, ino: 0, dev: 0 };
    try {
      const stat = await file.stat();
      if (!stat.isFile()) throw new FleetError('invalid_argument', `${path} is not a file`);
      const limit = params.lines ?? 50;
      const keep = (line: string) => params.contains === undefined || line.includes(params.contains);
      const tail = await lastLines(file, stat.size, limit, keep);
      let cut = false;
      const lines = tail.lines.map((raw) => {
        const line = lineOf(raw);
        cut ||= line.cut;
        return { text: line.text };
      });
      let reason: string | undefined;
      if (!tail.scannedAll) reason = `only the last ${MAX_SCAN_BYTES / 1024 / 1024} MiB were searched for contains`;
      else if (cut) reason = 'lines longer than 4096 characters were cut';
      const followMs = params.follow_ms ?? 0;
      Object.assign(followed, { offset: stat.size, ino: stat.ino, dev: stat.dev });
      if (followMs > 0) {
        const reopen = () => reopenRotated(params.path, allows, followed);
        await follow(followed, reopen, Math.min(followMs, Math.max(0, context.deadlineUnixMs - Date.now() - 250)), context.signal, (fresh) => {
          const kept = fresh.filter(keep).map((raw) => ({ text: lineOf(raw).text }));
          if (!kept.length) return;
          lines.push(...kept);
          // An answer holds the newest `lines` of all it saw; progress carried the rest as they came.
          if (lines.length > limit) {
            lines.splice(0, lines.length - limit);
            reason ??= `more than ${limit} lines: the answer keeps the newest, progress carried each as it came`;
          }
          context.emit({ path, lines: kept });
        });
      }
      return {
        payload: {
          path,
          lines,
          count: lines.length,
          size_bytes: followed.offset,
          modified_unix_ms: Math.floor((await followed.file.stat()).mtimeMs),
          truncated: reason !== undefined,
          ...(reason ? { truncated_reason: reason } : {}),
        },
      };
    } finally {
      await file.close();
      if (followed.file !== file) await followed.file.close();
    }
  });
}

type FileHandle = Awaited<ReturnType<typeof open>>;

/** The file a follow reads, how far, and which file it is (a rotation puts another at its path). */
interface Followed {
  file: FileHandle;
  offset: number;
  ino: number;
  dev: number;
}

/**
 * The file now at `asked`, opened, when it is another than the one followed
 * (logrotate's default renames the old file and creates a new one); null while
 * it is the same, missing, or no longer allowed. The path is resolved and
 * checked again: what a rotation put there may be a link out of the globs.
 */
async function reopenRotated(
  asked: string,
  allows: (path: string) => boolean,
  followed: Followed,
): Promise<{ file: FileHandle; ino: number; dev: number } | null> {
  let path: string;
  try {
    path = await allowedPath(asked, allows, '--log-paths');
  } catch {
    return null;
  }
  const now = await stat(path).catch(() => null);
  if (now === null || (now.ino === followed.ino && now.dev === followed.dev)) return null;
  const file = await open(path, 'r').catch(() => null);
  if (file === null) return null;
  const opened = await file.stat().catch(() => null);
  if (opened === null || !opened.isFile() || (opened.ino === followed.ino && opened.dev === followed.dev)) {
    await file.close();
    return null;
  }
  return { file, ino: opened.ino, dev: opened.dev };
}

/**
 * Reads what is appended to the followed file for `ms`, handing whole lines to
 * `take`. A file truncated (rotated by copytruncate) is read again from its
 * start; a file renamed away (rotated by create) is read to its end, then the
 * new file at its path from its start, as `tail -F` does.
 */
async function follow(
  followed: Followed,
  reopen: () => ReturnType<typeof reopenRotated>,
  ms: number,
  signal: AbortSignal,
  take: (lines: string[]) => void,
): Promise<void> {
  let partial = '';
  const until = Date.now() + ms;
  // The caller closes the file it opened, and the one followed at the end; a file followed in between is closed here.
  const opened = followed.file;
  const readNew = async () => {
    const { size } = await followed.file.stat();
    if (size < followed.offset) {
      followed.offset = 0;
      partial = '';
    }
    if (size === followed.offset) return;
    const chunk = Buffer.alloc(Math.min(size - followed.offset, MAX_SCAN_BYTES));
    const { bytesRead } = await followed.file.read(chunk, 0, chunk.length, followed.offset);
    followed.offset += bytesRead;
    const parts = (partial + chunk.subarray(0, bytesRead).toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    if (parts.length) take(parts);
  };
  while (Date.now() < until && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(FOLLOW_POLL_MS, Math.max(0, until - Date.now()))));
    await readNew();
    const rotated = await reopen();
    if (rotated === null) continue;
    // What was written to the old file before it was renamed is read first; its unfinished last line ends there.
    await readNew();
    if (partial) take([partial]);
    partial = '';
    const old = followed.file;
    Object.assign(followed, { ...rotated, offset: 0 });
    if (old !== opened) await old.close();
    await readNew();
  }
}
