import { constants, realpathSync } from 'node:fs';
import { type FileHandle, open, readlink, realpath } from 'node:fs/promises';
import { posix } from 'node:path';
import type { PathGlob } from '../../../shared/domains/files/path-glob.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

/** A file the collector opened, and the real path it was checked at. */
export interface OpenedPath {
  handle: FileHandle;
  realPath: string;
  /** The opened file itself, as a path the kernel resolves without following the name again (`/proc/self/fd/N`), else the real path. */
  fdPath: string;
}

/** Opens for reading only, never follows a last symlink, never waits on a FIFO (libuv adds O_CLOEXEC itself). */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? '';
}

/**
 * The operator's globs on this host, and the one way from a path asked for to
 * a file the collector touches. The path asked for, with its `..` applied as
 * written, must match a glob before anything on disk is looked at (so a path
 * outside says nothing of what exists there); then its real path (`realpath`:
 * `..` after symlinks, every symlink followed) must match too; then the file
 * is opened without following a symlink and the kernel's own name of what was
 * opened is checked again, so a symlink swapped in between is no way out.
 * A glob whose fixed directory is itself reached through a symlink
 * (`/var/run/app/**` with `/var/run` → `/run`) also matches where it leads.
 */
export class AllowedPaths {
  private readonly real: readonly PathGlob[];

  constructor(private readonly globs: readonly PathGlob[]) {
    this.real = globs.flatMap((glob) => {
      try {
        const base = realpathSync.native(glob.base);
        return base === glob.base ? [glob] : [glob, glob.rebased(base)];
      } catch {
        return [glob];
      }
    });
  }

  get configured(): boolean {
    return this.globs.length > 0;
  }

  /** The globs as the operator gave them, for messages. */
  describe(): string {
    return this.globs.map((glob) => glob.text).join(', ');
  }

  /** Whether a real (resolved) path is one the globs allow. */
  allows(realPath: string): boolean {
    return this.real.some((glob) => glob.matches(realPath));
  }

  /** Resolves a path asked for, refusing one outside the globs; throws the FleetError its caller answers. */
  async resolve(asked: string): Promise<string> {
    if (asked.includes('\0')) throw new FleetError('invalid_argument', 'the path holds a NUL character', { hint: 'Give the path as text.' });
    if (!posix.isAbsolute(asked)) {
      throw new FleetError('invalid_argument', `"${asked}" is not an absolute path`, { hint: `Give the full path, such as one under ${this.describe()}.` });
    }
    const written = posix.normalize(asked).replace(/(.)\/$/, '$1');
    if (!this.globs.some((glob) => glob.matches(written))) throw this.outside(asked, `"${asked}" is outside the paths this host allows`);
    let real: string;
    try {
      real = await realpath(asked);
    } catch (error) {
      throw this.unresolved(asked, error);
    }
    if (!this.allows(real)) throw this.outside(asked, `"${asked}" resolves to ${real}, outside the paths this host allows`);
    return real;
  }

  /** Opens a resolved path read-only, checking that what was opened is still inside the globs. */
  async open(realPath: string): Promise<OpenedPath> {
    let handle: FileHandle;
    try {
      handle = await open(realPath, OPEN_FLAGS);
    } catch (error) {
      // O_NOFOLLOW: the last name became a symlink since it was resolved.
      if (errnoOf(error) === 'ELOOP') throw this.outside(realPath, `${realPath} was replaced by a symlink while it was being read`);
      throw this.unresolved(realPath, error);
    }
    const fdPath = `/proc/self/fd/${handle.fd}`;
    const opened = await readlink(fdPath).catch(() => undefined);
    if (opened === undefined) return { handle, realPath, fdPath: realPath };
    if (opened !== realPath && !this.allows(opened)) {
      await handle.close();
      throw this.outside(realPath, `${realPath} led to ${opened} when opened, outside the paths this host allows`);
    }
    return { handle, realPath: opened, fdPath };
  }

  private outside(asked: string, message: string): FleetError {
    return new FleetError('forbidden', message, {
      hint: `This host allows ${this.describe()}; its operator adds paths with the agent's --file-paths.`,
      details: { path: asked },
    });
  }

  private unresolved(asked: string, error: unknown): FleetError {
    switch (errnoOf(error)) {
      case 'ENOENT':
      case 'ENOTDIR':
        return new FleetError('not_found', `no file or directory ${asked} on this host`, { hint: 'file_stat on its directory lists what is there.' });
      case 'ELOOP':
        return new FleetError('invalid_argument', `${asked} cannot be resolved: its symlinks lead in a loop`, {
          hint: "The host's operator can fix the link; file_stat on its directory lists the entries.",
        });
      case 'EACCES':
      case 'EPERM':
        return new FleetError('forbidden', `the agent's user may not read ${asked} (permission denied by the host)`, {
          hint: "The host's operator can let the agent's user read it, or run the agent as a user that may.",
        });
      default:
        return new FleetError('collector_failed', `${asked} cannot be opened: ${(error as Error).message}`, { cause: error });
    }
  }
}
