import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { closeSession } from './mcp-client.ts';
import { ANSWER_LOST } from './owed-answers-fetch.ts';

/** The broker no longer knows the session (it restarted): the request was never handled. */
function unknownSession(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404;
  // The transport reports a lost notification stream in an Error of its own, quoting the status.
  return /Session not found|Failed to open SSE stream: Not Found/.test(error instanceof Error ? error.message : String(error));
}

/** The broker refused the request unhandled (it is shutting down, or cannot resume the session now): another may take it. */
function refusedUnhandled(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 503;
}

/** Nothing answered at the broker's address (it died, or has not started): the request never reached it. */
function unreachable(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ECONNREFUSED' || /ECONNREFUSED/.test(cause.message)) return true;
  }
  return false;
}

/**
 * The request's answer was lost: the connection broke under it, or the
 * broker's answer stream ended without it (the broker stopping mid-answer).
 * It may have been handled.
 */
function answerLost(error: unknown): boolean {
  if (error instanceof McpError && error.data === ANSWER_LOST) return true;
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || /other side closed|ECONNRESET|fetch failed/.test(cause.message)) return true;
  }
  return false;
}

/**
 * A relay's MCP session with the broker that outlives the broker's restarts.
 * When the broker answers that it no longer knows the session, the link opens
 * a new one (initialize again), subscribes again to every resource the client
 * subscribed to, and sends the request again: it was never handled. The
 * same happens when nothing answers at the broker's address, or the broker
 * refuses the request unhandled because it is shutting down (`open` may then
 * reach another broker of a cluster); while no broker can be reached, requests fail.
 * A request whose answer was lost (its connection broke, or its answer stream
 * ended without it) may have run: a read is sent again on a new session, a
 * request that may change something is answered by its `lost` answer. A
 * session given up keeps its connection until the requests sent on it are
 * answered, so a broker stopping in order still delivers the answers it owes.
 */
export class BrokerLink {
  private reconnecting: Promise<Client> | undefined;
  private readonly subscriptions = new Set<string>();
  private closed = false;
  /** How many requests each client has in flight: one replaced is closed once it has none. */
  private readonly inFlight = new Map<Client, number>();
  private readonly retired = new Set<Client>();

  /**
   * @param open connects a new client (initialize included)
   * @param wire sets the handlers of the broker's notifications on a client
   */
  private constructor(
    private client: Client,
    private readonly open: () => Promise<Client>,
    private readonly wire: (client: Client) => void,
  ) {
    this.watch(client);
  }

  static async connect(open: () => Promise<Client>, wire: (client: Client) => void): Promise<BrokerLink> {
    const client = await open();
    wire(client);
    return new BrokerLink(client, open, wire);
  }

  /** The client of the session in use now. */
  get current(): Client {
    return this.client;
  }

  /**
   * Sends a request on the live session, opening a new one first when the
   * broker lost it. `lost`: the answer for a request that may change
   * something when its answer was lost; without it, the request is a read
   * and is sent again on a new session.
   */
  async request<T>(send: (client: Client) => Promise<T>, lost?: (error: unknown) => T): Promise<T> {
    const client = await (this.reconnecting ?? this.client);
    try {
      return await this.sendOn(client, send);
    } catch (error) {
      if (this.closed) throw error;
      if (unknownSession(error) || unreachable(error) || refusedUnhandled(error)) return this.sendOn(await this.reconnect(client), send);
      if (!answerLost(error)) throw error;
      // The next requests go to a new session, on the next broker if this one is gone.
      const fresh = this.reconnect(client);
      if (lost) {
        void fresh.catch(() => undefined);
        return lost(error);
      }
      return this.sendOn(await fresh, send);
    }
  }

  /** Sends on one client, counted in flight so that the client outlives it when it is replaced. */
  private async sendOn<T>(client: Client, send: (client: Client) => Promise<T>): Promise<T> {
    this.inFlight.set(client, (this.inFlight.get(client) ?? 0) + 1);
    try {
      return await send(client);
    } finally {
      const left = (this.inFlight.get(client) ?? 1) - 1;
      if (left > 0) this.inFlight.set(client, left);
      else {
        this.inFlight.delete(client);
        if (this.retired.delete(client)) void client.close().catch(() => undefined);
      }
    }
  }

  /** Subscribes on the live session, and again on every session opened later. */
  async subscribe<T>(uri: string, send: (client: Client) => Promise<T>): Promise<T> {
    const result = await this.request(send);
    this.subscriptions.add(uri);
    return result;
  }

  async unsubscribe<T>(uri: string, send: (client: Client) => Promise<T>): Promise<T> {
    this.subscriptions.delete(uri);
    return this.request(send);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const client of this.retired) void client.close().catch(() => undefined);
    this.retired.clear();
    await closeSession(this.client);
  }

  /** The broker's stream of notifications breaking with an unknown session (a restart) or no broker there: reconnect before the client asks. */
  private watch(client: Client): void {
    client.onerror = (error) => {
      if (!this.closed && client === this.client && (unknownSession(error) || unreachable(error))) void this.reconnect(client).catch(() => undefined);
    };
  }

  /** One new session for everyone who found `stale` broken; a failure leaves `stale` in place for the next try. */
  private reconnect(stale: Client): Promise<Client> {
    if (this.client !== stale) return Promise.resolve(this.client);
    this.reconnecting ??= (async () => {
      const fresh = await this.open();
      this.wire(fresh);
      for (const uri of this.subscriptions) await fresh.subscribeResource({ uri }).catch(() => undefined);
      this.client = fresh;
      this.watch(fresh);
      // Requests still waiting on the old session keep its connection: a broker stopping in order answers them.
      if (this.inFlight.has(stale)) this.retired.add(stale);
      else void stale.close().catch(() => undefined);
      return fresh;
    })().finally(() => {
      this.reconnecting = undefined;
    });
    return this.reconnecting;
  }
}
