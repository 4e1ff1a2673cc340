import type { Domain } from '../domain.ts';
import { guestInventorySchema } from './guest-inventory.ts';
import {
  proxmoxGuestReboot,
  proxmoxGuestShutdown,
  proxmoxGuestStart,
  proxmoxGuests,
  proxmoxNode,
  proxmoxScriptCommand,
  proxmoxScriptList,
  proxmoxStatus,
  proxmoxTaskStatus,
  proxmoxTasks,
} from './proxmox-actions.ts';
import { PROXMOX_FLAGS } from './proxmox-flags.ts';
import { resolveProxmoxOptions } from './proxmox-options.ts';

/** Proxmox VE nodes and their clusters' guests, through each node's API. */
export const proxmoxDomain = {
  name: 'proxmox',
  rank: 70,
  icon: '<rect x="3" y="4" width="18" height="7" rx="1"/><rect x="3" y="13" width="18" height="7" rx="1"/><path d="M7 7.5h.01M7 16.5h.01"/>',
  actions: [
    proxmoxStatus,
    proxmoxGuests,
    proxmoxNode,
    proxmoxTasks,
    proxmoxTaskStatus,
    proxmoxGuestStart,
    proxmoxGuestReboot,
    proxmoxGuestShutdown,
    proxmoxScriptList,
    proxmoxScriptCommand,
  ],
  reports: { proxmox_guests: guestInventorySchema },
  flags: PROXMOX_FLAGS,
  agentOptions: (flags) =>
    resolveProxmoxOptions({
      endpoint: flags['proxmox-endpoint'] as string | undefined,
      tokenFile: flags['proxmox-token-file'] as string | undefined,
      actionTokenFile: flags['proxmox-action-token-file'] as string | undefined,
      fingerprint: flags['proxmox-fingerprint'] as string | undefined,
      caFile: flags['proxmox-ca-file'] as string | undefined,
      insecure: flags['proxmox-insecure'] === true,
    }),
} as const satisfies Domain;
