import type { DomainHead } from '../domain.ts';
import { PROXMOX_FLAGS } from './proxmox-flags.ts';
import { resolveProxmoxOptions } from './proxmox-options.ts';

/**
 * A task's id as Proxmox VE writes it: `UPID:node:pid:pstart:starttime:type:id:user:`
 * (pid, pstart and starttime in hex). The node it ran on is its second field.
 */
export const UPID_PATTERN =
  /^UPID:([a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s]+):([^:\s]*):([^:\s]+):$/;

/** Proxmox VE nodes and their clusters' guests, through each node's API. */
export const proxmoxHead = {
  name: 'proxmox',
  rank: 70,
  icon: '<rect x="3" y="4" width="18" height="7" rx="1"/><rect x="3" y="13" width="18" height="7" rx="1"/><path d="M7 7.5h.01M7 16.5h.01"/>',
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
} as const satisfies DomainHead;
