import { systemdHead } from '../../../shared/domains/systemd/systemd-head.ts';
import type { SystemdOptions } from '../../../shared/domains/systemd/systemd-options.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { SystemdCollector } from './systemd-collector.ts';

/** The host's journal and services. */
export const systemdPlugin: CollectorPlugin<SystemdCollector> = {
  domain: systemdHead,
  create: ({ domainOptions, hooks }) => new SystemdCollector(domainOptions as SystemdOptions, hooks.report),
};
