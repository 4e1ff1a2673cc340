import { type ErrorCode, FleetError } from '../../../shared/errors/fleet-error.ts';

/**
 * Why talking to the Proxmox VE API failed, in words an operator acts on:
 * - configuration: the agent's own settings (no endpoint, a token file missing or malformed, no action token);
 * - tls: the server's certificate is not the one trusted (pin, CA file or system store);
 * - authentication: the API does not know the token (401);
 * - authorization: the token is known but may not do this (403), or sees nothing where something must exist;
 * - transport: the API could not be reached or did not answer in time;
 * - response: the API answered, but not with what it documents (or refused the request itself).
 */
export type FailureClass = 'configuration' | 'tls' | 'authentication' | 'authorization' | 'transport' | 'response';

/** The fleetmesh code of each class: what the broker and the model branch on. */
const CODES: Record<FailureClass, ErrorCode> = {
  // The collector cannot work until someone changes the agent's flags or files.
  configuration: 'collector_unavailable',
  // Nothing was sent: the token never reaches a server that is not trusted.
  tls: 'collector_unavailable',
  authentication: 'forbidden',
  authorization: 'forbidden',
  transport: 'collector_unavailable',
  response: 'collector_failed',
};

/** Classes after which asking the same API again in the same call is pointless. */
export const CONNECTION_CLASSES: ReadonlySet<FailureClass> = new Set(['configuration', 'tls', 'transport', 'authentication']);

interface ProxmoxFailureOptions {
  hint: string;
  /** Overrides the class's code where the API's answer says more (not_found, conflict). */
  code?: ErrorCode;
  cause?: unknown;
}

/** A FleetError whose message and hint name the failure class, as `proxmox (tls): …`. */
export function proxmoxFailure(failureClass: FailureClass, message: string, options: ProxmoxFailureOptions): FleetError {
  return new FleetError(options.code ?? CODES[failureClass], `proxmox (${failureClass}): ${message}`, {
    collector: 'proxmox',
    hint: `${options.hint} (failure class: ${failureClass})`,
    details: { failure_class: failureClass },
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}

/** The failure class of an error from this collector, if it has one. */
export function failureClassOf(error: unknown): FailureClass | undefined {
  if (!(error instanceof FleetError)) return undefined;
  return error.details?.failure_class as FailureClass | undefined;
}
