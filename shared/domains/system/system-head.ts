import type { DomainHead } from '../domain.ts';

/** Where docker-compose.yml and the Helm chart mount the host's /proc: used when it is there and nothing names another. */
export const DEFAULT_HOST_PROC = '/host/proc';

/**
 * How long `processes` measures each process's CPU share, at the call: long
 * enough for a busy process to show (top's own delay is 1 to 3 s), short
 * enough for an answer a model waits on.
 */
export const PROCESS_CPU_WINDOW_MS = 1000;

/** The host: its load, processes, ports and alerts. */
export const systemHead = {
  name: 'system',
  rank: 30,
  icon: '<rect x="3" y="4" width="18" height="12" rx="1"/><path d="M8 20h8M12 16v4M6 12l3-3 3 2 5-5"/>',
  flags: {
    'host-proc': {
      type: 'string',
      description: `the host's /proc as mounted into the agent's container; processes, listening ports and their owners are read there, not in the container (default ${DEFAULT_HOST_PROC} when it exists)`,
      placeholder: 'DIR',
    },
    'alert-cpu': { type: 'integer', description: 'CPU alert threshold, percent', default: 90, min: 1, max: 100, placeholder: 'PERCENT' },
    'alert-memory': { type: 'integer', description: 'memory alert threshold, percent', default: 85, min: 1, max: 100, placeholder: 'PERCENT' },
    'alert-disk': { type: 'integer', description: 'disk alert threshold, percent', default: 90, min: 1, max: 100, placeholder: 'PERCENT' },
  },
} as const satisfies DomainHead;
