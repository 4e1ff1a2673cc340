import type { DomainHead } from '../domain.ts';
import { SYSTEMD_FLAGS } from './systemd-flags.ts';
import { resolveSystemdOptions } from './systemd-options.ts';

/** syslog's priorities, most severe first: a priority filter keeps this one and the more severe. */
export const PRIORITIES = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'] as const;

/** The host's systemd: its journal, and its services through the service manager's own bus API. */
export const systemdHead = {
  name: 'systemd',
  rank: 140,
  icon: '<rect x="3" y="5" width="18" height="14" rx="2"/><path d="M7 10l3 2-3 2M12 15h5"/>',
  flags: SYSTEMD_FLAGS,
  agentOptions: (flags) =>
    resolveSystemdOptions({
      journalDir: flags['journal-dir'] as string | undefined,
      systemBus: flags['system-bus'] as string,
      journalctl: flags.journalctl as string,
    }),
} as const satisfies DomainHead;
