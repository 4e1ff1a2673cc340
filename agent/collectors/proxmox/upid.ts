import { UPID_PATTERN } from '../../../shared/domains/proxmox/proxmox-head.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

interface Upid {
  node: string;
  pid: number;
  pstart: number;
  /** Unix seconds. */
  starttime: number;
  type: string;
  id: string;
  user: string;
}

/** Reads the fields of a UPID; the node in it is where the task's status and log live. */
export function parseUpid(text: string): Upid {
  const match = UPID_PATTERN.exec(text);
  if (!match) {
    throw new FleetError('invalid_argument', `"${text.slice(0, 120)}" is not a UPID`, {
      hint: 'A UPID looks like UPID:pve1:0000A1B2:00C0FFEE:6650F00D:qmstart:101:root@pam:; proxmox_tasks lists them.',
    });
  }
  const [, node, pid, pstart, starttime, type, id, user] = match as unknown as string[];
  return {
    node: node as string,
    pid: Number.parseInt(pid as string, 16),
    pstart: Number.parseInt(pstart as string, 16),
    starttime: Number.parseInt(starttime as string, 16),
    type: type as string,
    id: id as string,
    user: user as string,
  };
}
