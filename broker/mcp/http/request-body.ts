import { toFleetError } from '../../../shared/errors/fleet-error.ts';
import { type BodyLimits, CLOSES_CONNECTION, readBody } from '../../http/read-body.ts';
import type { EdgeStep } from './edge-chain.ts';
import type { McpExchange, ProvenExchange } from './exchange.ts';
import { sendJsonRpcError } from './json-answers.ts';

function parseJson(body: Buffer): unknown {
  try {
    return body.length ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the body of a POST whole, within `limits`, and parses it as JSON for
 * the steps after it (a body that is not JSON is handed on unparsed: each era
 * answers it by its own rules). A body too large or too slow is answered 413
 * or 408 as an invalid request, and its connection closed (read-body.ts); a
 * client that left before its body arrived gets no answer.
 */
export function requestBody(limits: BodyLimits): EdgeStep<ProvenExchange, McpExchange> {
  return async (exchange, next) => {
    const { req, res } = exchange;
    if (req.method !== 'POST') return next({ ...exchange, body: undefined, parsed: undefined });
    let body: Buffer;
    try {
      body = await readBody(req, limits);
    } catch (error) {
      const refused = toFleetError(error);
      const status = refused.details?.httpStatus;
      if (typeof status === 'number') sendJsonRpcError(res, status, -32600, `Invalid Request: ${refused.message}. ${refused.hint}`, CLOSES_CONNECTION);
      return;
    }
    await next({ ...exchange, body, parsed: parseJson(body) });
  };
}
