import type { Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { posix } from 'node:path';
import type { fileRead, fileStat } from '../../../shared/domains/files/files-actions.ts';
import type { FilesOptions } from '../../../shared/domains/files/files-options.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { SystemAccounts } from '../../../shared/options/system-accounts.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { AllowedPaths, type OpenedPath } from './allowed-paths.ts';
import { readLinePage } from './line-page.ts';

/** How far into a file file_stat looks for a NUL byte to tell text from binary (as git does). */
const TEXT_PROBE_BYTES = 8 * 1024;
const MAX_ENTRIES = 500;

const NOT_CONFIGURED =
  "no --file-paths given: this agent reads no files (start it with --file-paths '/etc/nginx/**', repeatable, or file-paths: [...] in its config file)";

function entryType(stats: Stats): 'file' | 'directory' | 'symlink' | 'other' {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  return stats.isSymbolicLink() ? 'symlink' : 'other';
}

/**
 * Reads files under the globs the host's operator allows (--file-paths) and
 * nothing else: every path goes through AllowedPaths, whose refusals are
 * `forbidden` errors naming the path asked for, which the broker audits.
 * Without globs it is unavailable, and its tools say how to give some.
 */
export class FilesCollector implements Collector {
  readonly name = 'files';
  private readonly paths: AllowedPaths;
  private readonly accounts = SystemAccounts.read();

  constructor(private readonly options: FilesOptions) {
    this.paths = new AllowedPaths(options.globs);
  }

  async probe(): Promise<CollectorStatus> {
    return this.paths.configured ? { available: true, reason: '' } : { available: false, absent: true, reason: NOT_CONFIGURED };
  }

  facts(): Record<string, boolean> {
    return this.options.showSecrets ? { file_secrets_shown: true } : {};
  }

  register(dispatcher: Dispatcher): void {
    dispatcher.register<typeof fileRead>('files.read', async (params, context) =>
      this.withFile(params.path, async (opened, stats) => {
        if (stats.isDirectory()) {
          throw new FleetError('invalid_argument', `${params.path} is a directory`, { hint: `file_stat with path ${JSON.stringify(params.path)} lists it.` });
        }
        if (!stats.isFile())
          throw new FleetError('unsupported', `${params.path} is not a regular file (a device, FIFO or socket)`, { hint: 'file_stat shows what it is.' });
        const page = await readLinePage(opened.handle, {
          fromLine: params.from_line ?? 1,
          lines: params.lines ?? 200,
          sizeBytes: stats.size,
          maxBytes: this.options.maxBytes,
          showSecrets: this.options.showSecrets,
          signal: context.signal,
          path: params.path,
        });
        return {
          path: params.path,
          real_path: opened.realPath,
          size_bytes: stats.size,
          modified_unix_ms: Math.round(stats.mtimeMs),
          lines: page.lines,
          next_line: page.nextLine,
          redacted: page.redacted,
          ...(page.truncatedReason ? { truncated_reason: page.truncatedReason } : {}),
        };
      }),
    );

    dispatcher.register<typeof fileStat>('files.stat', async (params) =>
      this.withFile(params.path, async (opened, stats) => {
        const type = stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other';
        const listing = type === 'directory' ? await this.entries(opened) : undefined;
        return {
          path: params.path,
          real_path: opened.realPath,
          type,
          size_bytes: stats.size,
          mode: (stats.mode & 0o7777).toString(8).padStart(4, '0'),
          uid: stats.uid,
          gid: stats.gid,
          user: this.accounts.userName(stats.uid),
          group: this.accounts.groupName(stats.gid),
          modified_unix_ms: Math.round(stats.mtimeMs),
          changed_unix_ms: Math.round(stats.ctimeMs),
          text: type === 'file' ? await this.looksLikeText(opened) : null,
          ...(listing ?? {}),
        } as const;
      }),
    );
  }

  /** Resolves and opens an allowed path, runs `use` on it, and closes it. */
  private async withFile<T>(asked: string, use: (opened: OpenedPath, stats: Stats) => Promise<T>): Promise<{ payload: T }> {
    if (!this.paths.configured)
      throw new FleetError('collector_unavailable', NOT_CONFIGURED, { collector: this.name, hint: "Ask the host's operator to allow paths." });
    const opened = await this.paths.open(await this.paths.resolve(asked));
    try {
      return { payload: await use(opened, await opened.handle.stat()) };
    } finally {
      await opened.handle.close();
    }
  }

  private async looksLikeText(opened: OpenedPath): Promise<boolean> {
    const probe = Buffer.alloc(TEXT_PROBE_BYTES);
    const { bytesRead } = await opened.handle.read(probe, 0, TEXT_PROBE_BYTES, 0);
    return !probe.subarray(0, bytesRead).includes(0);
  }

  /** A directory's entries the globs allow (by their own path, not where a symlink among them leads), by name. */
  private async entries(
    opened: OpenedPath,
  ): Promise<{ entries: { name: string; type: ReturnType<typeof entryType>; size_bytes: number; modified_unix_ms: number }[]; entry_count: number }> {
    const names = (await readdir(opened.fdPath)).filter((name) => this.paths.allows(posix.join(opened.realPath, name))).sort();
    const entries = [];
    for (const name of names.slice(0, MAX_ENTRIES)) {
      const stats = await lstat(posix.join(opened.fdPath, name)).catch(() => undefined);
      if (stats) entries.push({ name, type: entryType(stats), size_bytes: stats.size, modified_unix_ms: Math.round(stats.mtimeMs) });
    }
    return { entries, entry_count: names.length };
  }
}
