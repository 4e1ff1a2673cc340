import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EdgeStep } from './edge-chain.ts';
import type { Exchange } from './exchange.ts';
import { sendJson } from './json-answers.ts';

/** A path served without a bearer token (health, metrics, icons). */
export type OpenRoute = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/**
 * The paths beside /mcp: each of `routes` is served by its handler, without
 * a bearer token (behind the host guard all the same); /mcp is handed on to
 * the MCP steps; any other path is answered 404, naming the endpoint.
 */
export function openRoutes(routes: Readonly<Record<string, OpenRoute>>): EdgeStep<Exchange> {
  return async (exchange, next) => {
    const { req, res, url } = exchange;
    const route = routes[url.pathname];
    if (route) return route(req, res);
    if (url.pathname === '/mcp') return next(exchange);
    sendJson(res, 404, { error: 'not found', hint: 'The MCP endpoint is /mcp.' });
  };
}
