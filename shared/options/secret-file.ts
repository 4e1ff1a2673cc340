import { readFileSync } from 'node:fs';
import { FleetError } from '../errors/fleet-error.ts';

/**
 * Reads a small secret (a token, a pin, a key) from a file given by a
 * `--…-file` flag, as Docker and Kubernetes secrets are mounted. Surrounding
 * whitespace is dropped; an empty or unreadable file stops the program with one
 * line naming the flag. The contents never appear in the error.
 */
export function readSecretFile(path: string, flag: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EACCES'
          ? `is not readable by this process${uid === undefined ? '' : ` (uid ${uid})`}`
          : `cannot be read (${code ?? (error as Error).message})`;
    throw new FleetError('invalid_argument', `${flag} ${path} ${reason}`, {
      hint:
        code === 'EACCES' ? 'Make the file readable by the user fleetmesh runs as (Docker secrets: set uid or mode; Kubernetes: defaultMode and fsGroup).' : '',
    });
  }
  const trimmed = text.trim();
  if (trimmed === '') throw new FleetError('invalid_argument', `${flag} ${path} is empty`);
  return trimmed;
}
