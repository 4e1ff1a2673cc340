import type { Server, ServerResponse } from 'node:http';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { parseHostPort } from '../../shared/options/values.ts';
import { http } from '../node-http.ts';

interface HealthServerOptions {
  /** HOST:PORT; port 0 picks a free one. */
  listen: string;
  /** Whether the broker has welcomed this agent on a live stream. */
  connected: () => boolean;
}

/**
 * The agent's probe endpoint (`--health-listen`): `/healthz` answers 200 while
 * the process serves (liveness: restarting does not reconnect any sooner), and
 * `/readyz` answers 200 while the agent is connected to the broker and 503
 * otherwise (readiness). Plain HTTP with no data beyond that one fact, so keep
 * it on loopback or the pod network.
 */
export class HealthServer {
  private server: Server | undefined;
  port = 0;

  constructor(private readonly options: HealthServerOptions) {}

  async start(): Promise<number> {
    const { host, port } = parseHostPort(this.options.listen, '--health-listen');
    const server = http.createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, { error: 'method not allowed' });
      const connected = this.options.connected();
      if (path === '/healthz') return reply(res, 200, { status: 'ok', connected });
      if (path === '/readyz') return reply(res, connected ? 200 : 503, connected ? { ready: true } : { ready: false, reason: 'not connected to the broker' });
      reply(res, 404, { error: 'not found', hint: 'The agent serves /healthz and /readyz.' });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((error: NodeJS.ErrnoException) => {
      throw new FleetError(
        'conflict',
        `cannot serve health on ${this.options.listen}: ${error.code === 'EADDRINUSE' ? 'the address is already in use' : error.message}`,
        {
          hint: 'Choose another address with --health-listen.',
        },
      );
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(`${JSON.stringify(body)}\n`);
}
