import type { ActionInput } from '../../../shared/catalog/action.ts';
import type { proxmoxGuestReboot, proxmoxGuestShutdown, proxmoxGuestStart } from '../../../shared/domains/proxmox/proxmox-actions.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { ProxmoxAccess } from './proxmox-access.ts';
import type { CallBounds, PowerAction } from './pve-api.ts';
import type { PveParams } from './pve-client.ts';

/** The widest of the three inputs: start and reboot take a subset of shutdown's parameters. */
type PowerParams = ActionInput<typeof proxmoxGuestShutdown>;

/**
 * Start, reboot and shutdown: homebutler asks for confirm: true on all three,
 * so the agent refuses without it even where the broker does not (start and
 * reboot are not destructive). Only the action token is used, and the answer
 * is Proxmox VE's acceptance with the task's UPID, not the guest's end state.
 */
export function registerGuestPower(dispatcher: Dispatcher, access: ProxmoxAccess): void {
  const power = (action: PowerAction, tool: string) => async (params: PowerParams, context: CallBounds) => {
    const api = access.actor(context);
    if (params.confirm !== true) {
      throw new FleetError('confirm_required', `${tool} would ${action} ${params.type} ${params.vmid} on node ${params.node}; nothing was changed`, {
        collector: 'proxmox',
        hint: 'Call again with confirm: true to go ahead.',
      });
    }
    const options: PveParams = { timeout: params.timeout_s, forceStop: params.force_stop };
    const upid = await api.guestPower(params.node, params.type, params.vmid, action, options);
    access.guestsChanged();
    return {
      payload: {
        status: 'accepted',
        upid,
        action,
        node: params.node,
        type: params.type,
        vmid: params.vmid,
        answered_by_node: access.membership.current()?.localNode ?? null,
      },
    };
  };
  dispatcher.register<typeof proxmoxGuestStart>('proxmox.guest_start', power('start', 'proxmox_guest_start'));
  dispatcher.register<typeof proxmoxGuestReboot>('proxmox.guest_reboot', power('reboot', 'proxmox_guest_reboot'));
  dispatcher.register<typeof proxmoxGuestShutdown>('proxmox.guest_shutdown', power('shutdown', 'proxmox_guest_shutdown'));
}
