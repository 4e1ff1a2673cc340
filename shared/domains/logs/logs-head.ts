import type { DomainHead } from '../domain.ts';
import { LOGS_FLAGS } from './logs-flags.ts';
import { resolveLogsOptions } from './logs-options.ts';

/** Plain log files on the host, under the paths its operator allows. */
export const logsHead = {
  name: 'logs',
  rank: 145,
  icon: '<path d="M6 3h9l4 4v14H6z"/><path d="M9 11h7M9 15h7M9 19h4"/>',
  flags: LOGS_FLAGS,
  agentOptions: (flags) => resolveLogsOptions({ logPaths: (flags['log-paths'] as string[] | undefined) ?? [] }),
} as const satisfies DomainHead;
