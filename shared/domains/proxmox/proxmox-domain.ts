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
import { proxmoxHead } from './proxmox-head.ts';

/** The proxmox domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const proxmoxDomain = {
  ...proxmoxHead,
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
} as const satisfies Domain;
