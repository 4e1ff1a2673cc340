import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/** Where a proxy listens: a loopback TCP port (0 for any) or a Unix socket path. */
export type ProxyListen = { port: number } | { path: string };

interface Link {
  client: Socket;
  upstream: Socket;
}

/**
 * A userspace TCP proxy between an agent and the broker (tc netem does not
 * work on these machines): it forwards bytes both ways and can add latency,
 * stall every connection, or make them half-open (the agent's side closed,
 * the broker's side open and silent).
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly links = new Set<Link>();
  private latencyMs = 0;
  private stalled = false;
  private halfOpen = false;

  constructor(private readonly upstream: { host: string; port: number }) {}

  /** Listens; resolves with the port (TCP) or the path (Unix socket). */
  async start(listen: ProxyListen = { port: 0 }): Promise<number | string> {
    const server = createServer((client) => this.accept(client));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      if ('path' in listen) server.listen(listen.path, resolve);
      else server.listen(listen.port, '127.0.0.1', resolve);
    });
    if ('path' in listen) return listen.path;
    const address = server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  /** Every byte waits this long before it is forwarded, in both directions, in order. */
  setLatency(ms: number): void {
    this.latencyMs = ms;
  }

  /** Stops forwarding on every connection (bytes wait), as a link that went quiet. */
  stall(): void {
    this.stalled = true;
    for (const link of this.links) {
      link.client.pause();
      link.upstream.pause();
    }
  }

  resume(): void {
    this.stalled = false;
    for (const link of this.links) {
      link.client.resume();
      link.upstream.resume();
    }
  }

  /**
   * Closes the agent's side of every connection and leaves the broker's side
   * open and silent (what the broker sends is swallowed), as when a NAT or a
   * firewall forgets a connection; until `heal()`, new connections are closed
   * as soon as they are accepted.
   */
  breakHalfOpen(): void {
    this.halfOpen = true;
    for (const link of this.links) this.silence(link);
  }

  heal(): void {
    this.halfOpen = false;
    for (const link of this.links) link.upstream.destroy();
    this.links.clear();
  }

  /** Connections open now. */
  get connections(): number {
    return this.links.size;
  }

  async stop(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    this.links.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.halfOpen) {
      client.destroy();
      return;
    }
    const upstream = tcpConnect(this.upstream.port, this.upstream.host);
    const link: Link = { client, upstream };
    this.links.add(link);
    const drop = () => {
      this.links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    this.forward(client, upstream, link);
    this.forward(upstream, client, link);
    if (this.stalled) {
      client.pause();
      upstream.pause();
    }
  }

  private forward(from: Socket, to: Socket, link: Link): void {
    from.on('data', (data: Buffer) => {
      if (this.halfOpen || !this.links.has(link)) return;
      if (this.latencyMs === 0) to.write(data);
      else setTimeout(() => to.destroyed || this.halfOpen || to.write(data), this.latencyMs);
    });
  }

  private silence(link: Link): void {
    link.upstream.removeAllListeners('close');
    link.client.removeAllListeners('close');
    link.client.destroy();
    link.upstream.resume();
    link.upstream.on('close', () => this.links.delete(link));
  }
}
