import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * The file operations the host readers make on a proc tree: the real ones, or
 * a test's that refuse some paths as the kernel does without SYS_PTRACE.
 */
export interface ProcFiles {
  readText(path: string): Promise<string>;
  list(path: string): Promise<string[]>;
  readLink(path: string): Promise<string>;
}

export const procFiles: ProcFiles = {
  readText: (path) => readFile(path, 'utf8'),
  list: (path) => readdir(path),
  readLink: (path) => readlink(path),
};
