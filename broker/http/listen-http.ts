import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { capConnections } from './connection-caps.ts';

/** What one HTTP listener (MCP, the web console) lets its clients hold, resolved in broker-options.ts. */
export interface HttpLimits {
  /** Connections open at once, all clients together. */
  maxConnections: number;
  /** Connections open at once from one source address (an IPv6 one by its /64). */
  maxConnectionsPerSource: number;
  /** How long a request's headers may take to arrive; past it Node answers 408 and closes the connection. */
  headersTimeoutMs: number;
  /** How long a whole request (headers and body) may take to arrive; Node's backstop, 408 and closed too. */
  requestTimeoutMs: number;
  /** How long reading a body may take (readBody()): our own 408, before Node's. */
  bodyTimeoutMs: number;
}

/**
 * How often Node looks for requests past their headers or request timeout
 * (its default, 30 s, would let an unfinished request live that much longer).
 */
const TIMEOUT_CHECK_MS = 1000;

/**
 * An HTTP server listening on host:port, its handler's failures answered by
 * `onFailure`, its connections capped (connection-caps.ts) and requests given
 * `limits`' clocks. Clients keep idle sockets for the Keep-Alive timeout we
 * advertise, less a margin (undici: 2 s); at Node's 5 s default a loaded
 * machine lets the server close a socket a client is already reusing
 * (ECONNRESET). Idle sockets live for a minute: the headers clock starts only
 * with a request's first byte.
 */
export async function listenHttp(
  host: string,
  port: number,
  limits: HttpLimits,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  onFailure: (error: unknown, res: ServerResponse) => void,
): Promise<Server> {
  const server = createServer(
    { headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
    (req, res) => {
      handle(req, res).catch((error: unknown) => onFailure(error, res));
    },
  );
  server.keepAliveTimeout = 60_000;
  capConnections(server, { total: limits.maxConnections, perSource: limits.maxConnectionsPerSource });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      // An accept that fails (out of descriptors) loses that one connection; it must not end the broker.
      server.on('error', () => {});
      resolve();
    });
  });
  return server;
}

/** Stops a server at once: open connections (idle keep-alive ones too) are closed, not waited for. */
export async function closeHttp(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The Host names a server on loopback answers to by default (DNS rebinding: nothing else). */
export function loopbackHosts(port: number): string[] {
  return [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`];
}

/** Whether a request's Host header is one the server answers to: the allow-list, or loopback at its port. */
export function hostAllowed(allowedHosts: readonly string[], port: number, host: string | undefined): boolean {
  const allowed = allowedHosts.length ? allowedHosts : loopbackHosts(port);
  return allowed.includes('*') || (host !== undefined && allowed.some((a) => a.toLowerCase() === host.toLowerCase()));
}
