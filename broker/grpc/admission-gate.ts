import { lookup } from 'node:dns/promises';
import { createServer, isIP, type Server, type Socket } from 'node:net';
import type { AdmissionPacer } from './admission-pacer.ts';

/**
 * The listen queue asked of the kernel, which caps it at net.core.somaxconn
 * (4096 on current kernels). Node's default of 511 let a fleet dialling at once
 * overflow it: the kernel dropped the excess SYNs and the agents' TCP retried
 * them 1, 3, 7, 15 and 31 s later, long after the broker was idle again.
 */
const LISTEN_BACKLOG = 4096;

interface AdmissionGateOptions {
  pacer: AdmissionPacer;
  /** Hands a connection to the gRPC server, which starts its TLS handshake. */
  admit: (socket: Socket) => void;
  /**
   * The longest a connection is held for its turn. Past it the connection is
   * closed at once, which costs the broker nothing and the agent one retry
   * after its backoff, and the turn is not taken from the agents that wait.
   */
  maxHoldMs: number;
}

/**
 * The agents' TCP listener in front of the gRPC server. It accepts every
 * connection at once (accepting is cheap, the TLS handshake is not) and hands
 * each to the server when the admission pacer gives it its turn: until then
 * the socket is not read, and the agent's TLS hello waits in the kernel. A
 * fleet that dials at once after a restart is thus handshaken at the
 * admission rate, in the order it arrived, and no dial is dropped by a full
 * listen queue or refused for being early.
 */
export class AdmissionGate {
  private readonly servers: Server[] = [];
  private readonly held = new Map<Socket, NodeJS.Timeout>();

  constructor(private readonly options: AdmissionGateOptions) {}

  /** Connections accepted and waiting for their turn. */
  get waiting(): number {
    return this.held.size;
  }

  /**
   * Listens on every address `host` names (both loopbacks for `localhost`, as
   * grpc-js would) on one port, and fails only when none could be bound;
   * resolves with that port (useful with port 0).
   */
  async listen(host: string, port: number): Promise<number> {
    const addresses = isIP(host) !== 0 ? [host] : [...new Set((await lookup(host, { all: true })).map((entry) => entry.address))];
    let bound: number | undefined;
    let failure: unknown;
    for (const address of addresses) {
      try {
        bound = await this.listenOn(address, bound ?? port);
      } catch (error) {
        failure ??= error;
      }
    }
    if (bound === undefined) throw failure;
    return bound;
  }

  private listenOn(host: string, port: number): Promise<number> {
    const server = createServer({ pauseOnConnect: true, noDelay: true }, (socket) => this.onConnection(socket));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, backlog: LISTEN_BACKLOG }, () => {
        server.off('error', reject);
        // An accept that fails (out of descriptors) loses that one connection, which retries; it must not end the broker.
        server.on('error', () => {});
        this.servers.push(server);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  private onConnection(socket: Socket): void {
    // A peer that resets while it waits must not take the process down.
    socket.on('error', () => {});
    const waitMs = this.options.pacer.admit(Date.now(), this.options.maxHoldMs);
    if (waitMs === undefined) {
      socket.destroy();
      return;
    }
    if (waitMs === 0) {
      this.options.admit(socket);
      return;
    }
    const timer = setTimeout(() => {
      this.held.delete(socket);
      if (!socket.destroyed) this.options.admit(socket);
    }, waitMs);
    this.held.set(socket, timer);
    socket.once('close', () => {
      clearTimeout(timer);
      this.held.delete(socket);
    });
  }

  /**
   * Stops listening at once and closes the connections still waiting. Those
   * handed over are the gRPC server's to close: the listeners' own close
   * waits for them, so it is not awaited here (it would wait for ever for a
   * server that has not shut down yet).
   */
  close(): void {
    for (const [socket, timer] of this.held) {
      clearTimeout(timer);
      socket.destroy();
    }
    this.held.clear();
    for (const server of this.servers.splice(0)) if (server.listening) server.close();
  }
}
