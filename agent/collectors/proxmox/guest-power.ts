import type { Action, ActionInput } from '../../../shared/catalog/action.ts';
import { proxmoxGuestReboot, proxmoxGuestShutdown, proxmoxGuestStart } from '../../../shared/domains/proxmox/proxmox-actions.ts';
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
  const power = (action: PowerAction, declaration: Action) => async (params: PowerParams, context: CallBounds) => {
    const api = access.actor(context);
    if (params.confirm !== true) {
      throw new FleetError(
        'confirm_required',
        `${declaration.tool} would ${action} ${params.type} ${params.vmid} on node ${params.node}; nothing was changed`,
        {
          collector: 'proxmox',
          hint: 'Call again with confirm: true to go ahead.',
        },
      );
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
  dispatcher.register(proxmoxGuestStart, power('start', proxmoxGuestStart));
  dispatcher.register(proxmoxGuestReboot, power('reboot', proxmoxGuestReboot));
  dispatcher.register(proxmoxGuestShutdown, power('shutdown', proxmoxGuestShutdown));
}
