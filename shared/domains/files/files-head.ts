import type { DomainHead } from '../domain.ts';
import { FILES_FLAGS } from './files-flags.ts';
import { resolveFilesOptions } from './files-options.ts';

/** Files of a host that its operator allows the fleet to read (configuration, not secrets), instead of ssh and cat. */
export const filesHead = {
  name: 'files',
  rank: 142,
  icon: '<path d="M6 3h8l4 4v14H6z"/><path d="M14 3v4h4M9 12h6M9 16h6"/>',
  flags: FILES_FLAGS,
  agentOptions: (flags) =>
    resolveFilesOptions({
      paths: flags['file-paths'] as string[],
      maxKib: flags['file-max-kib'] as number,
      showSecrets: flags['file-show-secrets'] === true,
    }),
  facts: { file_secrets_shown: 'file_read shows values that look like secrets (--file-show-secrets)' },
} as const satisfies DomainHead;
