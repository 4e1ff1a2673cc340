import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Writes a file atomically (temp file, then rename), so a crash never leaves a
 * half-written key or certificate. Private keys are written with mode 0600.
 */
export function writeFileAtomic(path: string, contents: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, contents, { mode });
  chmodSync(temp, mode);
  renameSync(temp, path);
}

export function writePrivateKey(path: string, pem: string): void {
  writeFileAtomic(path, pem, 0o600);
}
