import { PathGlob } from './path-glob.ts';

/** What the files collector may read and how, resolved once from its flags. */
export interface FilesOptions {
  /** The operator's globs; none: the collector is off. */
  readonly globs: readonly PathGlob[];
  /** file_read reads no further into a file than this. */
  readonly maxBytes: number;
  /** Values that look like secrets are shown as they are (--file-show-secrets). */
  readonly showSecrets: boolean;
}

/** Checks each glob (a bad one stops the agent with one line naming it) and drops repeats. */
export function resolveFilesOptions(flags: { paths: readonly string[]; maxKib: number; showSecrets: boolean }): FilesOptions {
  return {
    globs: [...new Set(flags.paths)].map((text) => new PathGlob(text)),
    maxBytes: flags.maxKib * 1024,
    showSecrets: flags.showSecrets,
  };
}
