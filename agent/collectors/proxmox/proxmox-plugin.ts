import { proxmoxHead } from '../../../shared/domains/proxmox/proxmox-head.ts';
import type { ProxmoxOptions } from '../../../shared/domains/proxmox/proxmox-options.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { ProxmoxCollector } from './proxmox-collector.ts';

/** A Proxmox VE node's API, when configured. */
export const proxmoxPlugin: CollectorPlugin<ProxmoxCollector> = {
  domain: proxmoxHead,
  create: ({ domainOptions, log, hooks }) =>
    new ProxmoxCollector({ config: domainOptions as ProxmoxOptions | undefined, log, onFactsChange: hooks.onFactsChange, report: hooks.report }),
};
