import { type Dirent, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PRIORITIES } from '../../../shared/domains/systemd/systemd-head.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { childProcess, readline } from '../../lazy-builtins.ts';
import { ENTRY_FIELDS } from './journal-entry.ts';

/** Which journal is read: the one of the system journalctl runs on, or a host's mounted into the agent's container. */
export interface JournalSource {
  journalctl: string;
  journalDir: string | undefined;
}

/** What entries a read selects; every value reaches journalctl as one `--flag=value` argument, never through a shell. */
export interface JournalFilter {
  unit?: string | undefined;
  priority?: (typeof PRIORITIES)[number] | undefined;
  sinceUnixS?: number | undefined;
  untilUnixS?: number | undefined;
  grep?: string | undefined;
  boot?: number | undefined;
  /** Entries older than this one (a cursor of an entry read before). */
  olderThan?: string | undefined;
}

/** Where journald keeps a system's journal: persistent, then volatile. */
const SYSTEM_JOURNALS = ['/var/log/journal', '/run/log/journal'];

/**
 * Whether a folder holds journal files, itself or in a machine's folder under it
 * (journald writes /var/log/journal/MACHINE-ID/): an empty /var/log/journal is no journal.
 */
export function holdsJournal(dir: string, depth = 0): boolean {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  return entries.some((entry) => (entry.isDirectory() ? depth === 0 && holdsJournal(join(dir, entry.name), 1) : /\.journal~?$/.test(entry.name)));
}

/** journalctl's arguments for a read of the newest entries first; `limit` caps how many it prints. */
export function journalctlArgs(source: JournalSource, filter: JournalFilter, limit: number | undefined): string[] {
  const args = ['--output=json', `--output-fields=${ENTRY_FIELDS.join(',')}`, '--no-pager', '--quiet', '--reverse'];
  if (source.journalDir !== undefined) args.push(`--directory=${source.journalDir}`);
  if (limit !== undefined) args.push(`--lines=${limit}`);
  if (filter.unit !== undefined) args.push(`--unit=${filter.unit}`);
  if (filter.priority !== undefined) args.push(`--priority=${PRIORITIES.indexOf(filter.priority)}`);
  // @SECONDS is journalctl's own spelling of an absolute time: nothing of the caller's text is parsed there.
  if (filter.sinceUnixS !== undefined) args.push(`--since=@${Math.floor(filter.sinceUnixS)}`);
  if (filter.untilUnixS !== undefined) args.push(`--until=@${Math.ceil(filter.untilUnixS)}`);
  if (filter.grep !== undefined) args.push(`--grep=${filter.grep}`);
  if (filter.boot !== undefined) args.push(`--boot=${filter.boot}`);
  // With --reverse, "after" the cursor is older than it.
  if (filter.olderThan !== undefined) args.push(`--after-cursor=${filter.olderThan}`);
  return args;
}

/** What journalctl's complaint on stderr means for the caller. */
function failureOf(stderr: string, code: number | null): FleetError {
  const first = stderr.trim().split('\n')[0] ?? '';
  if (/pattern|regular expression|PCRE/i.test(first)) {
    return new FleetError('invalid_argument', `grep is not a pattern journalctl takes: ${first}`, { hint: 'Use a PCRE2 pattern, or plain words.' });
  }
  if (/boot/i.test(first) && /not available|No such boot/i.test(first)) {
    return new FleetError('not_found', `the journal holds no such boot: ${first}`, { hint: 'boot 0 is this boot; the journal may not keep older ones.' });
  }
  if (/cursor/i.test(first)) {
    return new FleetError('invalid_argument', `page is not a cursor of this journal: ${first}`, {
      hint: 'Pass the next_page of an answer from the same host.',
    });
  }
  return new FleetError('collector_failed', `journalctl failed (exit ${code}): ${first || 'no message'}`, {
    collector: 'systemd',
    hint: 'The agent log has the call; check that the agent may read the journal (root, or the systemd-journal group).',
  });
}

/**
 * Reads a systemd journal through journalctl (`--output=json`), newest entries
 * first, without a shell: the one program that knows every journal format and
 * its compression, whichever systemd wrote it.
 */
export class JournalReader {
  constructor(
    private readonly source: JournalSource,
    private readonly holds: (dir: string) => boolean = holdsJournal,
  ) {}

  /** Why no journal can be read here (absent, not failed), or undefined when there is one. */
  absence(): string | undefined {
    if (this.source.journalDir !== undefined) {
      return this.holds(this.source.journalDir) ? undefined : `the journal directory ${this.source.journalDir} (--journal-dir) holds no journal files`;
    }
    if (SYSTEM_JOURNALS.some((dir) => this.holds(dir))) return undefined;
    return `this system keeps no systemd journal (no journal files in ${SYSTEM_JOURNALS.join(' or ')})`;
  }

  /**
   * Runs one read, handing each entry to `take` until it answers false or the
   * entries end; journalctl is stopped then, and when the signal aborts.
   */
  async read(filter: JournalFilter, limit: number | undefined, signal: AbortSignal, take: (entry: Record<string, unknown>) => boolean): Promise<void> {
    const absent = this.absence();
    if (absent) {
      throw new FleetError('collector_unavailable', absent, {
        collector: 'systemd',
        hint: "In a container, mount the host's /var/log/journal read-only and pass --journal-dir.",
      });
    }
    const child = childProcess().spawn(this.source.journalctl, journalctlArgs(this.source, filter, limit), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    });
    let stderr = '';
    let stopped = false;
    const stop = () => {
      stopped = true;
      child.kill('SIGTERM');
    };
    signal.addEventListener('abort', stop, { once: true });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; error?: NodeJS.ErrnoException }>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, error }));
      child.once('close', (code) => resolve({ code }));
    });
    try {
      for await (const text of readline().createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY })) {
        if (stopped) break;
        if (!text) continue;
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(text) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (!take(entry)) {
          stop();
          break;
        }
      }
      const { code, error } = await exited;
      if (error?.code === 'ENOENT') {
        throw new FleetError('collector_unavailable', `${this.source.journalctl} is not installed on this system`, {
          collector: 'systemd',
          hint: 'Install systemd (journalctl), or pass its path with --journalctl.',
        });
      }
      if (error) throw new FleetError('collector_failed', `journalctl could not run: ${error.message}`, { collector: 'systemd' });
      if (signal.aborted) throw signal.reason;
      // With --grep, journalctl exits 1 and says nothing when no entry matched, as grep does.
      if (!stopped && code !== 0 && !(code === 1 && filter.grep !== undefined && stderr.trim() === '')) throw failureOf(stderr, code);
    } finally {
      signal.removeEventListener('abort', stop);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}
