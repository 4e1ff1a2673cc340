import type { IncomingMessage } from 'node:http';
import type { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { ApiToken } from './api-token.ts';
import { proxmoxFailure } from './proxmox-failure.ts';

interface RefusedRequest {
  method: string;
  path: string;
  token: ApiToken;
}

/** The API's own words about a refusal: the status line's reason, and the per-parameter errors of a 400. */
function refusalText(response: IncomingMessage, body: string): string {
  let detail = '';
  try {
    const parsed = JSON.parse(body) as { errors?: unknown; message?: unknown };
    if (parsed.errors && typeof parsed.errors === 'object') detail = ` ${JSON.stringify(parsed.errors).slice(0, 500)}`;
    else if (typeof parsed.message === 'string') detail = ` ${JSON.stringify(parsed.message.trim().slice(0, 500))}`;
  } catch {
    // Not JSON: the reason phrase says enough.
  }
  return `${response.statusCode} ${JSON.stringify(response.statusMessage ?? '')}${detail}`;
}

/**
 * Maps a non-2xx answer to its failure class, and where Proxmox VE's words say
 * more (it answers 500 for a missing or busy guest), to a sharper code.
 */
export function apiRefusal(request: RefusedRequest, response: IncomingMessage, body: string): FleetError {
  const status = response.statusCode ?? 0;
  // The secret is not expected in an answer, but an echoing proxy must not carry it into a message.
  const words = request.token.redact(refusalText(response, body));
  const what = `${request.method} ${request.path}`;
  if (status === 401) {
    return proxmoxFailure('authentication', `the API does not accept the token ${request.token.id} (${words})`, {
      hint: 'Check that the token exists and has not expired (pveum user token list USER on the node) and that the file holds its current secret.',
    });
  }
  if (status === 403) {
    return proxmoxFailure('authorization', `the token ${request.token.id} may not ${what} (${words})`, {
      hint: 'Give the token a role on that path, such as pveum acl modify / --tokens ID --roles PVEAuditor for reads, VM.PowerMgmt on /vms for power actions; a privilege-separated token has only the ACLs given to the token itself.',
    });
  }
  const reason = request.token.redact(response.statusMessage ?? '');
  if (status === 500 && /does not exist|no such (vm|ct|guest|task|node)|not found|hostname lookup/i.test(reason)) {
    return proxmoxFailure('response', `${what}: ${words}`, {
      code: 'not_found',
      hint: 'proxmox_guests lists the guests and their nodes; proxmox_tasks lists tasks.',
    });
  }
  if (status === 500 && /already running|not running|is locked|template/i.test(reason)) {
    return proxmoxFailure('response', `${what}: ${words}`, { code: 'conflict', hint: "proxmox_guests shows the guest's current status and lock." });
  }
  // pveproxy's own codes when it cannot reach the cluster node a request is for.
  if (status === 595 || status === 596) {
    return proxmoxFailure('transport', `${what}: the node could not reach another cluster node (${words})`, {
      code: 'collector_failed',
      hint: 'A cluster node is down or unreachable from this one; proxmox_status shows which nodes are online.',
    });
  }
  return proxmoxFailure('response', `${what} failed: ${words}`, {
    hint: 'The words of Proxmox VE are in the message; the task log or journalctl -u pvedaemon on the node may say more.',
  });
}
