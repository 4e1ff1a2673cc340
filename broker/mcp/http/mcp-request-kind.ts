import type { IncomingMessage } from 'node:http';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { header } from './session-transport.ts';

/** Each message of a body: a batch's, or the body itself. */
function messagesOf(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

/**
 * Whether a request is 2025-era traffic (initialize, Mcp-Session-Id), as the
 * SDK's entry classifies it, read from the Node request: a POST whose body is
 * not JSON is answered by the 2025-era rules too.
 */
export function isLegacy(req: IncomingMessage, parsed: unknown): boolean {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method === 'POST' && parsed === undefined) return true;
  return (
    classifyInboundRequest({
      httpMethod: method,
      protocolVersionHeader: header(req.headers, 'mcp-protocol-version'),
      mcpMethodHeader: header(req.headers, 'mcp-method'),
      mcpNameHeader: header(req.headers, 'mcp-name'),
      ...(parsed === undefined ? {} : { body: parsed }),
    }).kind === 'legacy'
  );
}

/** Whether a body opens a 2025-era session. */
export function isInitialize(body: unknown): boolean {
  return messagesOf(body).some((m) => m && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
}

/** Whether a body asks for something (a JSON-RPC request), rather than only answering the server or notifying it. */
export function asksForSomething(body: unknown): boolean {
  return messagesOf(body).some((m) => m && typeof m === 'object' && 'method' in m && 'id' in m);
}

/** A 2026-07-28 `subscriptions/listen` request, whose answer is a stream that lasts as long as the client listens. */
export function isListen(body: unknown): boolean {
  return body !== null && typeof body === 'object' && (body as { method?: unknown }).method === 'subscriptions/listen';
}

/** The resource URIs a 2026-07-28 `subscriptions/listen` request asks to hear of (none for anything else; at most 100). */
export function listenedResources(body: unknown): string[] {
  if (!isListen(body)) return [];
  const uris = (body as { params?: { notifications?: { resourceSubscriptions?: unknown } } }).params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((uri): uri is string => typeof uri === 'string').slice(0, 100) : [];
}
