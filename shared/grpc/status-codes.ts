import { type ErrorCode, FleetError, isErrorCode } from '../errors/fleet-error.ts';

/** gRPC's status codes (grpc/doc/statuscodes.md), without loading a gRPC library to name them. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

/** Trailing metadata read from a header block: `-bin` keys base64-decoded, as gRPC sends them. */
export class TrailerMetadata {
  constructor(private readonly headers: Record<string, string | string[] | undefined>) {}

  get(key: string): (string | Buffer)[] {
    const raw = this.headers[key];
    const values = raw === undefined ? [] : Array.isArray(raw) ? raw : raw.split(',').map((value) => value.trim());
    return key.endsWith('-bin') ? values.map((value) => Buffer.from(value, 'base64')) : values;
  }
}

/** How a gRPC call ended. */
export interface GrpcStatus {
  code: number;
  details: string;
  metadata?: { get(key: string): (string | Buffer)[] };
}

export const CODE_KEY = 'fleetmesh-code';
export const HINT_KEY = 'fleetmesh-hint-bin';

/** A FleetError from a failed gRPC call, keeping a broker's own code and hint when it sent them. */
export function fromGrpcError(error: Partial<GrpcStatus> & { message?: string }): FleetError {
  const metadata = error.metadata;
  const sentCode = metadata?.get(CODE_KEY)[0];
  const sentHint = metadata?.get(HINT_KEY)[0];
  const hint = Buffer.isBuffer(sentHint) ? sentHint.toString('utf8') : '';
  const details = error.details || error.message || 'unknown gRPC failure';
  const grpcCode = error.code ?? GrpcCode.UNKNOWN;
  if (typeof sentCode === 'string' && isErrorCode(sentCode)) {
    return new FleetError(sentCode, details, { hint, details: { grpcCode } });
  }
  const code: ErrorCode =
    grpcCode === GrpcCode.DEADLINE_EXCEEDED
      ? 'deadline_exceeded'
      : grpcCode === GrpcCode.UNAVAILABLE
        ? 'agent_disconnected'
        : grpcCode === GrpcCode.UNAUTHENTICATED || grpcCode === GrpcCode.PERMISSION_DENIED
          ? 'forbidden'
          : grpcCode === GrpcCode.UNIMPLEMENTED
            ? 'unsupported'
            : 'internal';
  return new FleetError(code, details, { hint, details: { grpcCode } });
}
