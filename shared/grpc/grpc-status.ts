import * as grpc from '@grpc/grpc-js';
import type { ErrorCode, FleetError } from '../errors/fleet-error.ts';
import { CODE_KEY, HINT_KEY } from './status-codes.ts';

/**
 * FleetError → gRPC status, for what the broker answers. The fleetmesh code
 * and hint ride in trailing metadata, so the far side gets back exactly the
 * error that was thrown (`fromGrpcError` in `status-codes.ts` reads them back).
 */

const TO_GRPC: Record<ErrorCode, grpc.status> = {
  invalid_argument: grpc.status.INVALID_ARGUMENT,
  not_found: grpc.status.NOT_FOUND,
  ambiguous: grpc.status.INVALID_ARGUMENT,
  forbidden: grpc.status.PERMISSION_DENIED,
  confirm_required: grpc.status.FAILED_PRECONDITION,
  conflict: grpc.status.ALREADY_EXISTS,
  agent_offline: grpc.status.UNAVAILABLE,
  agent_disconnected: grpc.status.UNAVAILABLE,
  deadline_exceeded: grpc.status.DEADLINE_EXCEEDED,
  cancelled: grpc.status.CANCELLED,
  unsupported: grpc.status.UNIMPLEMENTED,
  collector_unavailable: grpc.status.UNAVAILABLE,
  collector_failed: grpc.status.INTERNAL,
  result_too_large: grpc.status.RESOURCE_EXHAUSTED,
  unavailable: grpc.status.UNAVAILABLE,
  internal: grpc.status.INTERNAL,
};

export function toGrpcStatus(error: FleetError): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set(CODE_KEY, error.code);
  if (error.hint) metadata.set(HINT_KEY, Buffer.from(error.hint, 'utf8'));
  // A refused credential is UNAUTHENTICATED rather than PERMISSION_DENIED: the
  // caller did not prove who it is, as opposed to being someone not allowed.
  // A refusal for the rate (details.retryAfterMs) is RESOURCE_EXHAUSTED: try again later, nothing is wrong with the request.
  const code =
    error.details?.authentication === true
      ? grpc.status.UNAUTHENTICATED
      : typeof error.details?.retryAfterMs === 'number'
        ? grpc.status.RESOURCE_EXHAUSTED
        : TO_GRPC[error.code];
  return { code, details: error.message, metadata };
}
