import type { DomainHead } from '../domain.ts';

/** Where archives go when --backup-dir is not given: this folder of the agent's --data-dir (doctor reads it too). */
export const DEFAULT_BACKUP_FOLDER = 'backups';

/** Archives of containers' named volumes on each host's disk, rehearsed and restored through the engine. */
export const backupHead = {
  name: 'backup',
  rank: 120,
  icon: '<rect x="3" y="4" width="18" height="5" rx="1"/><path d="M5 9v11h14V9M10 13h4"/>',
  flags: {
    'backup-dir': {
      type: 'string',
      description: `where volume archives are kept (default: ${DEFAULT_BACKUP_FOLDER}/ in --data-dir)`,
      placeholder: 'DIR',
    },
  },
} as const satisfies DomainHead;
