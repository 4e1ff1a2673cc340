import { open } from 'node:fs/promises';
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
      let size = stat.size;
      if (followMs > 0) {
        size = await follow(file, stat.size, Math.min(followMs, Math.max(0, context.deadlineUnixMs - Date.now() - 250)), context.signal, (fresh) => {
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
          size_bytes: size,
          modified_unix_ms: Math.floor((await file.stat()).mtimeMs),
          truncated: reason !== undefined,
          ...(reason ? { truncated_reason: reason } : {}),
        },
      };
    } finally {
      await file.close();
    }
  });
}

/** Reads what is appended to a file for `ms`, handing whole lines to `take`; a file truncated (rotated by copytruncate) is read again from its start. Resolves with the size reached. */
async function follow(file: Awaited<ReturnType<typeof open>>, from: number, ms: number, signal: AbortSignal, take: (lines: string[]) => void): Promise<number> {
  let offset = from;
  let partial = '';
  const until = Date.now() + ms;
  while (Date.now() < until && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(FOLLOW_POLL_MS, Math.max(0, until - Date.now()))));
    const { size } = await file.stat();
    if (size < offset) {
      offset = 0;
      partial = '';
    }
    if (size === offset) continue;
    const chunk = Buffer.alloc(Math.min(size - offset, MAX_SCAN_BYTES));
    const { bytesRead } = await file.read(chunk, 0, chunk.length, offset);
    offset += bytesRead;
    const parts = (partial + chunk.subarray(0, bytesRead).toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    if (parts.length) take(parts);
  }
  return offset;
}
