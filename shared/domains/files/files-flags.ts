import type { FlagSpecs } from '../../options/command-line.ts';

/** The agent flags of the files collector: without --file-paths it reads nothing. */
export const FILES_FLAGS = {
  'file-paths': {
    type: 'list',
    description: "files file_read and file_stat may read: an absolute glob such as '/etc/nginx/**' (* within a name, ? one character, ** any depth)",
    default: [],
    repeatable: true,
    placeholder: 'GLOB',
  },
  'file-max-kib': {
    type: 'integer',
    description: 'the most of a file file_read reads, from its start',
    default: 1024,
    min: 1,
    max: 65_536,
    placeholder: 'KIB',
  },
  'file-show-secrets': {
    type: 'boolean',
    description: 'file_read shows values that look like secrets (passwords, tokens, private keys) instead of [redacted]',
    default: false,
  },
} as const satisfies FlagSpecs;
