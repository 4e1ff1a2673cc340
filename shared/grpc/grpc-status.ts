import type { ErrorCode, FleetError } from '../errors/fleet-error.ts';
import { CODE_KEY, GrpcCode, HINT_KEY } from './status-codes.ts';

/**
 * FleetError → gRPC status, for what the broker answers. The fleetmesh code
 * and hint ride in trailing metadata, so the far side gets back exactly the
 * error that was thrown (`fromGrpcError` in `status-codes.ts` reads them back).
 */

const TO_GRPC: Record<ErrorCode, GrpcCode> = {
  invalid_argument: GrpcCode.INVALID_ARGUMENT,
  not_found: GrpcCode.NOT_FOUND,
  ambiguous: GrpcCode.INVALID_ARGUMENT,
  forbidden: GrpcCode.PERMISSION_DENIED,
  confirm_required: GrpcCode.FAILED_PRECONDITION,
  conflict: GrpcCode.ALREADY_EXISTS,
  agent_offline: GrpcCode.UNAVAILABLE,
  agent_disconnected: GrpcCode.UNAVAILABLE,
  deadline_exceeded: GrpcCode.DEADLINE_EXCEEDED,
  cancelled: GrpcCode.CANCELLED,
  unsupported: GrpcCode.UNIMPLEMENTED,
  collector_unavailable: GrpcCode.UNAVAILABLE,
  collector_failed: GrpcCode.INTERNAL,
  result_too_large: GrpcCode.RESOURCE_EXHAUSTED,
  unavailable: GrpcCode.UNAVAILABLE,
  internal: GrpcCode.INTERNAL,
};

/** Metadata to send with a status: keys ending in `-bin` carry bytes, the others text. */
export class OutgoingMetadata {
  private readonly values = new Map<string, string | Buffer>();

  set(key: string, value: string | Buffer): void {
    this.values.set(key, value);
  }

  get(key: string): (string | Buffer)[] {
    const value = this.values.get(key);
    return value === undefined ? [] : [value];
  }

  getMap(): Record<string, string | Buffer> {
    return Object.fromEntries(this.values);
  }
}

/** A status to end a call with. */
export interface OutgoingStatus {
  code: number;
  details: string;
  metadata: OutgoingMetadata;
}

export function toGrpcStatus(error: FleetError): OutgoingStatus {
  const metadata = new OutgoingMetadata();
  metadata.set(CODE_KEY, error.code);
  if (error.hint) metadata.set(HINT_KEY, Buffer.from(error.hint, 'utf8'));
  // A refused credential is UNAUTHENTICATED rather than PERMISSION_DENIED: the
  // caller did not prove who it is, as opposed to being someone not allowed.
  // A refusal for the rate (details.retryAfterMs) is RESOURCE_EXHAUSTED: try again later, nothing is wrong with the request.
  const code =
    error.details?.authentication === true
      ? GrpcCode.UNAUTHENTICATED
      : typeof error.details?.retryAfterMs === 'number'
        ? GrpcCode.RESOURCE_EXHAUSTED
        : TO_GRPC[error.code];
  return { code, details: error.message, metadata };
}
