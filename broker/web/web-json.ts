import type { IncomingMessage, ServerResponse } from 'node:http';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { CLOSES_CONNECTION, readBody } from '../http/read-body.ts';

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Everything the console loads comes from this server: no inline script or
 * style, no other origin, no framing (the tests load every page under it and
 * fail on a CSP violation).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** A refused body (readBody()) is answered with its own status, and its connection closed. */
export function sendError(res: ServerResponse, status: number, error: FleetError): void {
  const refusedBody = error.details?.httpStatus;
  if (typeof refusedBody === 'number') sendJson(res, refusedBody, { error: error.toInfo() }, CLOSES_CONNECTION);
  else sendJson(res, status, { error: error.toInfo() });
}

export async function readJson(req: IncomingMessage, bodyTimeoutMs: number): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    throw new FleetError('invalid_argument', 'the request body must be JSON (content-type: application/json)');
  }
  const raw = await readBody(req, { maxBytes: MAX_BODY_BYTES, timeoutMs: bodyTimeoutMs });
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new FleetError('invalid_argument', 'the request body is not valid JSON', {
      hint: 'Send a JSON object: {"token": …} to sign in, {"tool": …, "arguments": {…}} to call a tool.',
    });
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new FleetError('invalid_argument', 'the request body must be a JSON object', {
      hint: 'Send a JSON object: {"token": …} to sign in, {"tool": …, "arguments": {…}} to call a tool.',
    });
  return body as Record<string, unknown>;
}

/** The HTTP status of a refused change: gone, not allowed, or in the way of another; anything else is a bad request. */
export function statusOf(error: FleetError): number {
  return error.code === 'not_found' ? 404 : error.code === 'forbidden' ? 403 : error.code === 'conflict' ? 409 : 400;
}
