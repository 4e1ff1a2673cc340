import type { DomainHead } from '../domain.ts';
import { PACKAGES_FLAGS } from './packages-flags.ts';
import { resolvePackagesOptions } from './packages-options.ts';

/** The host's installed packages and pending updates, read from its own package database and index files. */
export const packagesHead = {
  name: 'packages',
  rank: 150,
  icon: '<path d="M12 3l8 4.5v9L12 21l-8-4.5v-9z"/><path d="M4 7.5l8 4.5 8-4.5M12 12v9"/>',
  flags: PACKAGES_FLAGS,
  agentOptions: (flags) => resolvePackagesOptions({ hostRoot: flags['host-root'] as string }),
} as const satisfies DomainHead;
