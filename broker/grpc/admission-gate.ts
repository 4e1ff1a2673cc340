import { lookup } from 'node:dns/promises';
import { createServer, isIP, type Server, type Socket } from 'node:net';
import { type RateLimit, RateLimiter } from '../limits/rate-limiter.ts';
import { sourceKey } from '../limits/source-key.ts';
import { AdmissionPacer, type AdmissionRate } from './admission-pacer.ts';

/**
 * The listen queue asked of the kernel, which caps it at net.core.somaxconn
 * (4096 on current kernels). Node's default of 511 let a fleet dialling at once
 * overflow it: the kernel dropped the excess SYNs and the agents' TCP retried
 * them 1, 3, 7, 15 and 31 s later, long after the broker was idle again.
 */
const LISTEN_BACKLOG = 4096;

/**
 * Listen sockets per address, where the runtime can share a port among them
 * (SO_REUSEPORT, Node 22.12 and 23.1 on). Node accepts one connection per
 * listen socket per turn of its event loop: on Node 24, with a loop doing
 * 50 ms of work a turn, one socket accepted 96 dials in 5 s, 8 sockets 752
 * and 64 all 3,000; at 200 ms a turn, 8 sockets 192 and 64 1,536. A broker
 * taking back 10,000 agents while it serves the rest has turns that long:
 * with 8 sockets about 6,500 dials waited in the kernel's queues and agents
 * came back at about 25 a second. The kernel spreads new connections over
 * the sockets of a port, so each is one more accept a turn; 64 keep the
 * admission rate's 200 a second with turns of up to 300 ms.
 */
const LISTEN_SOCKETS = canSharePorts(process.versions.node) ? 64 : 1;

/** Fails as a listen fails when something holds `host:port`; else lets the port go again at once. */
function probePort(host: string, port: number): Promise<void> {
  const probe = createServer((socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host, port, backlog: 1 }, () => {
      // Closing the listen socket frees the port now; the callback would only wait for connections.
      probe.close();
      resolve();
    });
  });
}

/** Whether this Node can listen on a port several times (net's `reusePort`: 22.12, 23.1 and later). */
export function canSharePorts(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/**
 * A clock that fires this late was held by the broker's own event loop, not
 * by the peer: what the peer sent meanwhile is still unread, since timers run
 * before the loop reads its sockets. It gets this much longer to be read.
 */
const LATE_CLOCK_GRACE_MS = 1000;

/** The most a connection may send before its turn: one TLS record (an agent's hello is about 2 KiB); more is not TLS. */
const MAX_HELLO_BYTES = 16_384 + 5;

/** What one source address, and all of them together, may hold of the gate. */
export interface AdmissionLimits {
  /** Connections of one source pending at once (see AdmissionGate); past it a new one is closed at once. */
  pendingPerSource: number;
  /** The same, for a source slowed for leaving its connections unfinished. */
  pendingPerSlowedSource: number;
  /** Connections pending at once, all sources together. */
  pendingTotal: number;
  /** Connections a source may leave unfinished before it is slowed; it is again once its allowance refills. */
  unfinishedPerSource: RateLimit;
  /** How long a new connection has to send its first bytes (an agent's TLS hello follows its TCP handshake at once). */
  helloTimeoutMs: number;
  /** How long a connection handed to TLS has to make its first call. */
  handshakeTimeoutMs: number;
  /**
   * Connections handed to TLS and not yet established, at most: past it a
   * turn waits for one of them to end. A broker too busy to handshake at the
   * admission rate is then handed only what it finishes, instead of
   * handshakes that each take longer the more there are, until their clocks
   * run out and every one of them was work lost.
   */
  handshakesAtOnce: number;
}

interface AdmissionGateOptions {
  /** How fast connections are handed to TLS. */
  rate: AdmissionRate;
  limits: AdmissionLimits;
  /** Hands a connection to the gRPC server, which starts its TLS handshake. */
  admit: (socket: Socket) => void;
}

/** A connection's way through the gate: its first bytes awaited, its turn awaited, its TLS handshake and first call awaited. */
export type Stage = 'hello' | 'waiting' | 'handshake';

/** How a connection can leave the gate. */
export const GATE_OUTCOMES = [
  /** Its first call reached the gRPC server. */
  'established',
  /** Closed at accept: its source, or the gate, held as many pending as it may. */
  'refused_full',
  /** Sent nothing within the hello clock. */
  'hello_timeout',
  /** Sent more before its turn than a TLS hello. */
  'hello_oversized',
  /** Its peer closed it while it waited for its turn. */
  'left_waiting',
  /** Handed to TLS, it made no first call within the handshake clock. */
  'handshake_timeout',
  /** Its peer closed it before it had its turn's first call made (in hello or handshake). */
  'closed_unfinished',
] as const;

export type GateOutcome = (typeof GATE_OUTCOMES)[number];

interface Pending {
  socket: Socket;
  source: string;
  /** The peer as the gRPC server names it (`ADDRESS:PORT`), by which established() finds it. */
  peer: string;
  stage: Stage;
  /** Ends the hello and handshake stages that take too long. */
  clock: NodeJS.Timeout | undefined;
  /** What the peer sent before its turn, given back to the socket when it is handed over. */
  hello: Buffer[];
  helloBytes: number;
  read: () => void;
}

/**
 * The agents' TCP listener in front of the gRPC server. A connection is
 * pending from its accept until its first call reaches the server
 * (established()), in three stages: it must send its first bytes (a TLS
 * hello) within a few seconds, kept for TLS to read; it then waits for its
 * turn at the admission pacer, which takes the sources in turn at the
 * admission rate; then it is handed to the gRPC server, and must make its
 * first call within the handshake clock. Accepting and waiting are cheap, the
 * TLS handshake is not: a fleet that dials at once after a restart is
 * handshaken at the admission rate and no dial is dropped by a full listen
 * queue, while a bare TCP connect costs one descriptor for a few seconds and
 * no turn.
 *
 * Each source may have `pendingPerSource` connections pending, and all
 * sources `pendingTotal`; past that a new connection is closed at once,
 * which costs the broker nothing and the agent one retry after its backoff.
 * A connection that ends pending, other than by leaving while it waits for
 * its turn (it closed, or its clock ran out), counts as unfinished against
 * its source; a source past its allowance of unfinished connections is
 * slowed to `pendingPerSlowedSource` pending at once, and the others are not
 * slowed with it.
 */
export class AdmissionGate {
  private readonly servers: Server[] = [];
  private readonly pacer: AdmissionPacer<Pending>;
  private readonly pending = new Set<Pending>();
  private readonly pendingBySource = new Map<string, number>();
  /** Connections handed to TLS and not yet established, by peer. */
  private readonly handshaking = new Map<string, Pending>();
  private readonly unfinished: RateLimiter;
  /** The timer of the next turn, while connections wait for it. */
  private turn: NodeJS.Timeout | undefined;
  private closed = false;
  /** Connections by how they left the gate, since it opened. */
  private readonly outcomes = new Map<GateOutcome, number>();
  /** Connections handed to TLS since the gate opened. */
  private handedOver = 0;

  constructor(private readonly options: AdmissionGateOptions) {
    this.pacer = new AdmissionPacer(options.rate);
    this.unfinished = new RateLimiter(options.limits.unfinishedPerSource);
  }

  /** Connections waiting for their turn. */
  get waiting(): number {
    return this.pacer.waiting;
  }

  /** What the gate holds now, by stage, and what it has done since it opened (for /metrics and the benches). */
  figures(): { pending: Record<Stage, number>; handedOver: number; outcomes: Record<GateOutcome, number> } {
    const pending: Record<Stage, number> = { hello: 0, waiting: 0, handshake: 0 };
    for (const entry of this.pending) pending[entry.stage] += 1;
    const outcomes = Object.fromEntries(GATE_OUTCOMES.map((outcome) => [outcome, this.outcomes.get(outcome) ?? 0])) as Record<GateOutcome, number>;
    return { pending, handedOver: this.handedOver, outcomes };
  }

  private count(outcome: GateOutcome): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
  }

  /**
   * Listens on every address `host` names (both loopbacks for `localhost`) on
   * one port, and fails only when none could be bound;
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

  /** Listens on one address with LISTEN_SOCKETS sockets sharing the port; resolves with the port. */
  private async listenOn(host: string, port: number): Promise<number> {
    const shared = LISTEN_SOCKETS > 1;
    // Any process of the same user may join a port its sockets share: first make sure no one holds the port, so that
    // a second broker given the same address fails to start as it always did, instead of taking half its dials.
    if (shared && port !== 0) await probePort(host, port);
    const first = await this.bind(host, port, shared);
    this.servers.push(first);
    const address = first.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    for (let i = 1; i < LISTEN_SOCKETS; i++) this.servers.push(await this.bind(host, bound, true));
    return bound;
  }

  private bind(host: string, port: number, reusePort: boolean): Promise<Server> {
    const server = createServer({ pauseOnConnect: true, noDelay: true }, (socket) => this.onConnection(socket));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, backlog: LISTEN_BACKLOG, reusePort }, () => {
        server.off('error', reject);
        // An accept that fails (out of descriptors) loses that one connection, which retries; it must not end the broker.
        server.on('error', () => {});
        resolve(server);
      });
    });
  }

  /**
   * The first call of a connection handed over has reached the gRPC server
   * (`peer` as the server's getPeer() names it): the connection is the server's
   * from now on and no longer counts against its source.
   */
  established(peer: string): void {
    const entry = this.handshaking.get(peer);
    if (!entry) return;
    this.forget(entry);
    this.count('established');
  }

  private onConnection(socket: Socket): void {
    // A peer that resets while it waits must not take the process down.
    socket.on('error', () => {});
    const { limits } = this.options;
    const address = socket.remoteAddress;
    const source = sourceKey(address);
    const held = this.pendingBySource.get(source) ?? 0;
    const cap = this.unfinished.allows(source) ? limits.pendingPerSource : limits.pendingPerSlowedSource;
    if (this.closed || address === undefined || held >= cap || this.pending.size >= limits.pendingTotal) {
      if (!this.closed) this.count('refused_full');
      socket.destroy();
      return;
    }
    const entry: Pending = {
      socket,
      source,
      peer: `${address}:${socket.remotePort}`,
      stage: 'hello',
      clock: undefined,
      hello: [],
      helloBytes: 0,
      read: () => this.read(entry),
    };
    this.pending.add(entry);
    this.pendingBySource.set(source, held + 1);
    this.startClock(entry, limits.helloTimeoutMs, () => this.giveUp(entry, true, 'hello_timeout'));
    // What arrives before the turn is read out and kept, so that the peer's end is seen while it waits (end and
    // close come only once the buffer is read), and given back to the socket for TLS to read when it is handed over.
    socket.on('readable', entry.read);
    // Leaving while it waits for its turn costs nothing and is not held against the source.
    socket.once('close', () => (entry.stage === 'waiting' ? this.giveUp(entry, false, 'left_waiting') : this.giveUp(entry, true, 'closed_unfinished')));
  }

  private read(entry: Pending): void {
    for (let chunk = entry.socket.read() as Buffer | null; chunk !== null; chunk = entry.socket.read() as Buffer | null) {
      entry.hello.push(chunk);
      entry.helloBytes += chunk.length;
    }
    if (entry.helloBytes > MAX_HELLO_BYTES) this.giveUp(entry, true, 'hello_oversized');
    else if (entry.stage === 'hello' && entry.helloBytes > 0) this.waitForTurn(entry);
  }

  private waitForTurn(entry: Pending): void {
    clearTimeout(entry.clock);
    entry.clock = undefined;
    entry.stage = 'waiting';
    this.pacer.enqueue(entry.source, entry);
    this.nextTurns();
  }

  /**
   * Hands over the connections whose turn has come, as many as there is room
   * for beside the handshakes in flight, and sets a timer for the next turn
   * while others wait; with no room, the next handshake to end calls again.
   */
  private nextTurns(): void {
    if (this.turn || this.closed) return;
    const room = this.options.limits.handshakesAtOnce - this.handshaking.size;
    if (room <= 0) return;
    const { due, nextInMs } = this.pacer.due(Date.now(), room);
    for (const entry of due) this.handOver(entry);
    if (nextInMs === undefined) return;
    this.turn = setTimeout(() => {
      this.turn = undefined;
      this.nextTurns();
    }, nextInMs);
  }

  private handOver(entry: Pending): void {
    if (entry.socket.destroyed) {
      this.giveUp(entry, false, 'left_waiting');
      return;
    }
    entry.stage = 'handshake';
    this.handedOver += 1;
    this.handshaking.set(entry.peer, entry);
    this.startClock(entry, this.options.limits.handshakeTimeoutMs, () => this.giveUp(entry, true, 'handshake_timeout'));
    entry.socket.off('readable', entry.read);
    entry.socket.unshift(Buffer.concat(entry.hello, entry.helloBytes));
    entry.hello = [];
    this.options.admit(entry.socket);
  }

  /** Runs `expire` when a stage's clock runs out, with LATE_CLOCK_GRACE_MS more when the clock fired late. */
  private startClock(entry: Pending, ms: number, expire: () => void): void {
    const due = Date.now() + ms;
    entry.clock = setTimeout(() => {
      if (Date.now() - due > LATE_CLOCK_GRACE_MS) entry.clock = setTimeout(expire, LATE_CLOCK_GRACE_MS);
      else expire();
    }, ms);
  }

  /** Ends a pending connection; `unfinished` counts it against its source. */
  private giveUp(entry: Pending, unfinished: boolean, outcome: GateOutcome): void {
    if (!this.pending.has(entry)) return;
    this.forget(entry);
    if (!this.closed) this.count(outcome);
    if (unfinished) this.unfinished.take(entry.source);
    entry.socket.destroy();
  }

  /** The gate lets go of a connection: established, or about to be closed. A handshake that ends makes room for a turn. */
  private forget(entry: Pending): void {
    if (!this.pending.delete(entry)) return;
    clearTimeout(entry.clock);
    if (entry.stage === 'waiting') this.pacer.withdraw(entry.source, entry);
    const handshaking = this.handshaking.get(entry.peer) === entry;
    if (handshaking) this.handshaking.delete(entry.peer);
    const held = (this.pendingBySource.get(entry.source) ?? 1) - 1;
    if (held > 0) this.pendingBySource.set(entry.source, held);
    else this.pendingBySource.delete(entry.source);
    if (handshaking && this.pacer.waiting > 0) this.nextTurns();
  }

  /**
   * Stops listening at once and closes every pending connection. Those
   * established are the gRPC server's to close: the listeners' own close
   * waits for them, so it is not awaited here (it would wait for ever for a
   * server that has not shut down yet).
   */
  close(): void {
    this.closed = true;
    clearTimeout(this.turn);
    this.turn = undefined;
    for (const entry of [...this.pending]) {
      this.forget(entry);
      entry.socket.destroy();
    }
    for (const server of this.servers.splice(0)) if (server.listening) server.close();
  }
}
