/**
 * The one error type of fleetmesh. Its code comes from the fixed vocabulary of
 * DESIGN §5; its message says what went wrong and its hint names the next step.
 * It is thrown, never returned: it becomes a gRPC status in `grpc-status.ts`,
 * and an MCP `isError` tool result in `broker/mcp/tool-result.ts`.
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
  'cancelled',
  'unsupported',
  'collector_unavailable',
  'collector_failed',
  'result_too_large',
  'unavailable',
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

/** The next step an error names when the code that threw it has no better one. */
const NEXT_STEP: Record<ErrorCode, string> = {
  invalid_argument: 'fleet://actions/{id} has the full schema of every parameter.',
  not_found: 'list_agents and find show what exists.',
  ambiguous: 'Name it exactly: by id, or with host.',
  forbidden: 'Ask an operator for a grant or level that covers it; fleet://actions lists what this identity may run.',
  confirm_required: 'Check the targets, then call again with confirm: true.',
  conflict: 'Read the current state (describe) and try again.',
  agent_offline: 'list_agents shows which agents are online; try again once it is back.',
  agent_disconnected: 'Call again; list_agents shows whether the agent reconnected.',
  deadline_exceeded: 'Call again with a larger timeout_ms (max 60000) or fewer hosts.',
  cancelled: 'Nothing more happens for this call; call again if it is still wanted.',
  unsupported: 'agent_info shows the actions and collectors the agent offers.',
  collector_unavailable: 'agent_info gives the reason the collector is unavailable.',
  collector_failed: 'Call again; agent_info shows the state of its collectors.',
  result_too_large: 'Narrow the call: fewer hosts, a filter or a smaller limit.',
  unavailable:
    'A part of the broker cluster (its store or bus) is not answering: reads of the fleet still answer; try again once GET /readyz says ready, it names the part.',
  internal: 'This is a bug or an unexpected condition; the broker and agent logs have details.',
};

interface FleetErrorOptions {
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
    this.hint = options.hint || NEXT_STEP[code];
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

/**
 * Any thrown value as a FleetError: an abort (the caller gave up) is
 * `cancelled`, a timeout is `deadline_exceeded`, anything else unknown is `internal`.
 */
export function toFleetError(error: unknown): FleetError {
  if (error instanceof FleetError) return error;
  const name = error instanceof Error || error instanceof DOMException ? error.name : '';
  if (name === 'AbortError') return new FleetError('cancelled', 'the call was cancelled by the client', { cause: error });
  if (name === 'TimeoutError') return new FleetError('deadline_exceeded', 'the call ran past its deadline', { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new FleetError('internal', message, { cause: error, hint: 'This is a bug or an unexpected condition; the broker and agent logs have details.' });
}

/** An ErrorInfo for a value that came off the wire, tolerating unknown codes from newer peers. */
export function errorInfo(code: string, message: string, hint = '', extra: { host?: string; collector?: string } = {}): ErrorInfo {
  const known = isErrorCode(code) ? code : 'internal';
  const info: ErrorInfo = { code: known, message, hint: hint || NEXT_STEP[known] };
  if (extra.host) info.host = extra.host;
  if (extra.collector) info.collector = extra.collector;
  return info;
}

/** Errors grouped by a key (their host, their kind), each group in the order its errors came. */
export function errorsBy(errors: readonly ErrorInfo[], key: (error: ErrorInfo) => string): Map<string, ErrorInfo[]> {
  const groups = new Map<string, ErrorInfo[]>();
  for (const error of errors) {
    const name = key(error);
    const group = groups.get(name);
    if (group) group.push(error);
    else groups.set(name, [error]);
  }
  return groups;
}
