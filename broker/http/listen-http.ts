import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * An HTTP server listening on host:port, its handler's failures answered by
 * `onFailure`. Clients keep idle sockets for the Keep-Alive timeout we
 * advertise, less a margin (undici: 2 s); at Node's 5 s default a loaded
 * machine lets the server close a socket a client is already reusing
 * (ECONNRESET). Idle sockets live for a minute, and headers may take longer.
 */
export async function listenHttp(
  host: string,
  port: number,
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  onFailure: (error: unknown, res: ServerResponse) => void,
): Promise<Server> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => onFailure(error, res));
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
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
