import { realpath } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

/**
 * The real path of a file the caller asked for, when the operator's globs
 * allow it: resolved first (`..`, symlinks), so a link under /var/log to
 * /etc/shadow is matched as /etc/shadow. A path that does not exist is
 * matched as written, so whether a file exists outside the globs is never told.
 */
export async function allowedPath(asked: string, allows: (path: string) => boolean, flag: string): Promise<string> {
  if (!isAbsolute(asked))
    throw new FleetError('invalid_argument', `path ${asked} is not absolute`, { hint: 'Name it from the root, such as /var/log/syslog.' });
  let real: string;
  try {
    real = await realpath(asked);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!allows(resolve(asked))) throw refusal(asked, undefined, flag);
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new FleetError('not_found', `no file ${asked} on this host`, { hint: 'The operator’s globs name which files may be read.' });
    throw new FleetError('forbidden', `${asked} cannot be resolved: ${(error as Error).message}`);
  }
  if (!allows(real)) throw refusal(asked, real, flag);
  return real;
}

function refusal(asked: string, real: string | undefined, flag: string): FleetError {
  const resolved = real !== undefined && real !== asked ? ` (it resolves to ${real})` : '';
  return new FleetError('forbidden', `${asked}${resolved} is not under the paths this host allows (${flag})`, {
    hint: `The host's operator names them with ${flag} on its agent; agent_info shows the agent's flags.`,
  });
}
