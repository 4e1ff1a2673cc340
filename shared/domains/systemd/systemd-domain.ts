import type { Domain } from '../domain.ts';
import { journalQuery, journalSearch } from './journal-actions.ts';
import { serviceList, serviceRestart, serviceStart, serviceStatus, serviceStop } from './service-actions.ts';
import { serviceInventorySchema } from './service-inventory.ts';
import { SYSTEMD_FLAGS } from './systemd-flags.ts';
import { resolveSystemdOptions } from './systemd-options.ts';

/** The host's systemd: its journal, and its services through the service manager's own bus API. */
export const systemdDomain = {
  name: 'systemd',
  rank: 140,
  icon: '<rect x="3" y="5" width="18" height="14" rx="2"/><path d="M7 10l3 2-3 2M12 15h5"/>',
  actions: [journalQuery, journalSearch, serviceList, serviceStatus, serviceStart, serviceRestart, serviceStop],
  reports: { systemd_services: serviceInventorySchema },
  flags: SYSTEMD_FLAGS,
  agentOptions: (flags) =>
    resolveSystemdOptions({
      journalDir: flags['journal-dir'] as string | undefined,
      systemBus: flags['system-bus'] as string,
      journalctl: flags.journalctl as string,
    }),
} as const satisfies Domain;
