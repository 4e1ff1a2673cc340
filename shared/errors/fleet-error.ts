/**
 * The one error type of fleetmesh. Its code comes from the fixed vocabulary of
 * DESIGN §5; its message says what went wrong and its hint names the next step.
 * It is mapped to a gRPC status in `grpc-status.ts` and to an MCP `isError`
 * result at the MCP edge, each in exactly one place.
 */
export const ERROR_CODES = [
  'invalid_argument',
  'not_found',
  'ambiguous',
  'forbidden',
  'confirm_required',
  'conflict',
  'agent_offline',
  'agent_disconnected',
  'deadline_exceeded',
  'unsupported',
  'collector_unavailable',
  'collector_failed',
  'result_too_large',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The serialised shape of an error, as results and the wire carry it. */
export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  hint: string;
  host?: string;
  collector?: string;
}

export interface FleetErrorOptions {
  hint?: string;
  host?: string;
  collector?: string;
  cause?: unknown;
  /** Extra structured facts a caller may branch on (closest names, matching ids, …). */
  details?: Record<string, unknown>;
}

export class FleetError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  readonly host: string | undefined;
  readonly collector: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: FleetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FleetError';
    this.code = code;
    this.hint = options.hint ?? '';
    this.host = options.host;
    this.collector = options.collector;
    this.details = options.details;
  }

  toInfo(): ErrorInfo {
    const info: ErrorInfo = { code: this.code, message: this.message, hint: this.hint };
    if (this.host !== undefined) info.host = this.host;
    if (this.collector !== undefined) info.collector = this.collector;
    return info;
  }
}

export function isErrorCode(value: string): value is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(value);
}

/** Any thrown value as a FleetError; unknown failures become `internal`. */
export function toFleetError(error: unknown): FleetError {
  if (error instanceof FleetError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FleetError('internal', message, { cause: error, hint: 'This is a bug or an unexpected condition; the broker and agent logs have details.' });
}

/** An ErrorInfo for a value that came off the wire, tolerating unknown codes from newer peers. */
export function errorInfo(code: string, message: string, hint = '', extra: { host?: string; collector?: string } = {}): ErrorInfo {
  const info: ErrorInfo = { code: isErrorCode(code) ? code : 'internal', message, hint };
  if (extra.host) info.host = extra.host;
  if (extra.collector) info.collector = extra.collector;
  return info;
}
