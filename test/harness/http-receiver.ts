import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver took. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A local HTTP server standing in for a notification service (a webhook,
 * ntfy, Gotify, Slack, Discord, Telegram): it records every request and
 * answers 200, or the status a path is told to answer.
 */
export class HttpReceiver {
  readonly requests: Received[] = [];
  private readonly statuses = new Map<string, number>();
  private readonly waiters: (() => void)[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<HttpReceiver> {
    let receiver: HttpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        receiver?.requests.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(receiver?.statuses.get(path) ?? 200, { 'content-type': 'application/json' }).end('{"ok":true}');
        for (const wake of receiver?.waiters.splice(0) ?? []) wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new HttpReceiver(server);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Makes requests to this path answer with this status. */
  answer(path: string, status: number): void {
    this.statuses.set(path, status);
  }

  /** Resolves with the first request that matches, already taken or still to come. */
  async next(match: (request: Received) => boolean): Promise<Received> {
    for (;;) {
      const found = this.requests.find(match);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
