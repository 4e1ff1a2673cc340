import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { FleetError } from '../../errors/fleet-error.ts';

/** Where the packages collector reads the host's package database. */
export interface PackagesOptions {
  /** The host's root file system as the agent sees it: / on the host, its mount in a container. */
  hostRoot: string;
}

/** Resolves the flags once: a root that is not a directory stops the agent with one line. */
export function resolvePackagesOptions(flags: { hostRoot: string }): PackagesOptions {
  const hostRoot = resolve(flags.hostRoot);
  let isDirectory = false;
  try {
    isDirectory = statSync(hostRoot).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) {
    throw new FleetError('invalid_argument', `--host-root ${hostRoot} is not a directory`, {
      hint: "Mount the host's / read-only into the agent's container and name the mount here.",
    });
  }
  return { hostRoot };
}
