import { type AuthInfo, type ClientCapabilities, Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { ModernEndpoint } from '../../broker/mcp/http/modern-endpoint.ts';
import type { McpSession } from '../../broker/mcp/mcp-session.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { MODERN_REVISION } from './mcp-client-v2.ts';

/** A client on a session, and what ends both. */
export interface LinkedClient<C> {
  client: C;
  close(): Promise<void>;
}

/** What the SDK's handlers are told of the caller, as the HTTP edge tells them. */
function authInfoOf(session: McpSession): AuthInfo {
  const { identity } = session;
  return { token: 'redacted', clientId: identity.id, scopes: [], expiresAt: Math.floor(identity.expiresAt / 1000), extra: { identity: identity.name } };
}

/** The URL in-memory 2026-07-28 clients are given: nothing listens there, their fetch hands each request to the endpoint. */
export const MEMORY_URL = new URL('http://fleetmesh.memory/mcp');

/**
 * A fetch that hands each request to a 2026-07-28 endpoint, as the HTTP edge
 * does once it has read the body and proved the identity (the endpoint's
 * session's); nothing crosses a socket.
 */
export function fetchFrom(endpoint: ModernEndpoint): (url: string | URL, init?: RequestInit) => Promise<Response> {
  const authInfo = authInfoOf(endpoint.session);
  return async (url, init) => {
    const request = new Request(url, init);
    const text = request.method === 'POST' ? await request.clone().text() : '';
    return endpoint.serve(request, authInfo, text ? JSON.parse(text) : undefined);
  };
}

/** A 1.x SDK Client on a 2025-era session's server, over the SDK's in-memory transport: nothing on a socket. */
export async function memoryClient(session: McpSession): Promise<LinkedClient<Client>> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await session.server.connect(serverSide);
  const client = new Client({ name: 'fleetmesh-memory-test', version: '1.0.0' });
  await client.connect(clientSide);
  return { client, close: () => client.close() };
}

/**
 * A 2.x SDK Client on an MCP session, in memory. On a 2025-era session: the
 * 2025 handshake over the in-memory transport. On a 2026-07-28 endpoint's
 * session (era `modern`), which makes a server per request: the client's
 * requests go to the endpoint the HTTP edge would serve them from, through
 * a fetch that hands each Request to it directly, so its stateless requests
 * and listen streams take the same path as over HTTP, without a socket.
 */
export async function memoryClientV2(
  session: McpSession,
  options: { era: 'legacy' | 'modern'; capabilities?: ClientCapabilities },
): Promise<LinkedClient<ClientV2>> {
  const client = new ClientV2(
    { name: 'fleetmesh-memory-test-v2', version: '2.0.0' },
    {
      ...(options.capabilities ? { capabilities: options.capabilities } : {}),
      ...(options.era === 'modern' ? { versionNegotiation: { mode: { pin: MODERN_REVISION } } } : {}),
    },
  );
  if (options.era === 'legacy') {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await session.server.connect(serverSide);
    await client.connect(clientSide);
    return { client, close: () => client.close() };
  }
  const endpoint = new ModernEndpoint(session, session.identity.expiresAt, (url) => new URL(url).origin, silentLogger);
  await client.connect(new StreamableHTTPClientTransport(MEMORY_URL, { fetch: fetchFrom(endpoint) }));
  return {
    client,
    close: async () => {
      await client.close();
      await endpoint.close();
    },
  };
}
