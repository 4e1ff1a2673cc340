import { EventEmitter } from 'node:events';
import { type ConnectionOptions, connect, type Msg, type NatsConnection, nkeyAuthenticator } from '@nats-io/transport-node';
import type { z } from 'zod';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { BusTrust, OpenedMessage } from './bus-trust.ts';

export interface BusOptions {
  /** `nats://[user:password@|token@]host:port[,host:port…]`, or `tls://…` for NATS over TLS. */
  url: string;
  /** A token read from --bus-token-file; wins over one in the URL. */
  token: string | undefined;
  /** An nkey user seed read from --bus-nkey-file (`SU…`): NATS checks a signature made with it. */
  nkeySeed?: string | undefined;
  /** TLS to NATS (PEM texts): the CA its server certificate is checked against, and a client certificate when NATS asks for one. */
  tls?: { ca?: string | undefined; cert?: string | undefined; key?: string | undefined } | undefined;
  /**
   * `--bus-insecure`: start on a bus that anyone who reaches it may join.
   * Bus messages stay signed and calls sealed, but such a client reads what
   * brokers say in clear (agents, their reports) and can flood the bus.
   */
  insecure?: boolean | undefined;
  /** This broker's name on the bus (client name, for the NATS monitoring pages). */
  brokerId: string;
}

/** A subscription on the bus; ending it twice, or after the bus closed, is harmless. */
export interface BusSubscription {
  unsubscribe(): void;
}

/** A believed message: who sent it (its keys prove it) and what it says. */
export interface BusMessage<T> {
  sender: string;
  message: T;
}

interface BusEvents {
  /** The connection to NATS came back: what others missed must be said again. */
  reconnected: [];
  disconnected: [];
}

const encoder = new TextEncoder();
/** The client pings the server this often, and counts the connection stale after this many unanswered: 10 s of silence. */
const PING_INTERVAL_MS = 5000;
const MAX_PINGS_OUT = 2;
/** The same error from the bus server, while it keeps refusing a reconnect, is logged once in this long. */
const REPEATED_ERROR_LOG_MS = 30_000;

/** The servers and credentials of a bus URL, which may list several servers after the first. */
export function parseBusUrl(url: string): { servers: string[]; tls: boolean; user?: string; pass?: string; token?: string } {
  const [first = '', ...more] = url.split(',');
  let parsed: URL;
  try {
    parsed = new URL(first);
  } catch {
    throw new FleetError('invalid_argument', `--bus ${JSON.stringify(url)} is not a URL`, {
      hint: 'Give it as nats://HOST:4222 (with user:password@ or token@ when NATS asks for them), or tls://HOST:4222 for NATS over TLS.',
    });
  }
  if (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') {
    throw new FleetError('invalid_argument', `--bus must be a nats:// or tls:// URL, not ${parsed.protocol}//`, { hint: 'Give it as nats://HOST:4222.' });
  }
  const tls = parsed.protocol === 'tls:';
  const servers = [`${parsed.protocol}//${parsed.host}`, ...more.map((server) => server.trim()).filter((server) => server !== '')];
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  if (user && pass) return { servers, tls, user, pass };
  if (user) return { servers, tls, token: user };
  return { servers, tls };
}

/** How the broker proves itself to NATS: what `connect` takes, and whether there is anything to prove at all. */
function busCredentials(options: BusOptions): { connection: Partial<ConnectionOptions>; tls: ConnectionOptions['tls']; given: boolean } {
  const { tls: tlsScheme, user, pass, token } = parseBusUrl(options.url);
  const tokenGiven = options.token ?? token;
  const clientCertificate = options.tls?.cert !== undefined && options.tls.key !== undefined;
  const tls =
    tlsScheme || options.tls?.ca !== undefined || clientCertificate
      ? {
          ...(options.tls?.ca !== undefined ? { ca: options.tls.ca } : {}),
          ...(clientCertificate ? { cert: options.tls?.cert, key: options.tls?.key } : {}),
        }
      : undefined;
  const connection: Partial<ConnectionOptions> = {
    ...(user !== undefined ? { user, pass } : {}),
    ...(tokenGiven !== undefined ? { token: tokenGiven } : {}),
    ...(options.nkeySeed !== undefined ? { authenticator: nkeyAuthenticator(encoder.encode(options.nkeySeed.trim())) } : {}),
  };
  return { connection, tls, given: user !== undefined || tokenGiven !== undefined || options.nkeySeed !== undefined || clientCertificate };
}

/** What a bus that takes strangers gives up, for the log line and /readyz. */
export const INSECURE_BUS_WARNING =
  'the bus takes clients without credentials (--bus-insecure): anyone who reaches NATS can read what brokers say in clear (agents, their state and reports) and flood the bus; forged and replayed messages are still dropped and calls stay sealed';

/**
 * Whether NATS lets in a client that proves nothing: a connection with the
 * same servers and TLS trust but no token, password, nkey or client
 * certificate. A bus that does is open to anyone who can reach it.
 */
async function takesStrangers(servers: string[], tls: ConnectionOptions['tls']): Promise<boolean> {
  const strangerTls = tls ? { ...(tls.ca !== undefined ? { ca: tls.ca } : {}) } : undefined;
  try {
    const probe = await connect({
      servers,
      ...(strangerTls ? { tls: strangerTls } : {}),
      reconnect: false,
      timeout: 5000,
      name: 'fleetmesh-broker credential check',
    });
    await probe.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * The broker's connection to NATS: messages on fleetmesh subjects, each
 * signed by this broker or sealed to the brokers it is for, and believed
 * only from brokers the store registered (bus-trust.ts); a reconnect that
 * never gives up; and whether it is connected now (for /readyz and for
 * refusing cluster-wide work while it is not). A bus without credentials is
 * refused unless the operator says `--bus-insecure`.
 */
export class Bus extends EventEmitter<BusEvents> {
  private connectedNow = true;
  private closing = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly trust: BusTrust,
    private readonly log: Logger,
    /** Why this bus is weaker than it should be, for /readyz. */
    readonly warnings: readonly string[],
  ) {
    super();
    void this.watch();
    void this.nc.closed().then((error) => {
      if (this.closing) return;
      // Not expected with a reconnect that never gives up; if it happens, say so rather than be off the bus in silence.
      this.log.error('the connection to the bus closed and will not come back: restart this broker', { ...(error ? { error: error.message } : {}) });
      if (!this.connectedNow) return;
      this.connectedNow = false;
      this.emit('disconnected');
    });
  }

  static async open(options: BusOptions, trust: BusTrust, log: Logger): Promise<Bus> {
    const { servers } = parseBusUrl(options.url);
    const { connection, tls, given } = busCredentials(options);
    if (!given && !options.insecure) {
      throw new FleetError('invalid_argument', 'the bus has no credentials: give NATS a token, an nkey or a client certificate for the brokers', {
        hint: 'Run nats-server with --auth TOKEN (or nkey users, or TLS with verify) and start the broker with --bus-token-file, --bus-nkey-file or --bus-cert-file/--bus-key-file; --bus-insecure starts it anyway.',
      });
    }
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers,
        name: `fleetmesh-broker ${options.brokerId}`,
        ...connection,
        ...(tls ? { tls } : {}),
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        // The client otherwise stops for good after the server refuses two reconnects in a row for the same
        // authentication reason, and "Authentication Timeout" is one: a broker whose loop was held past the
        // server's 2 s to send its credentials, twice, was left off the bus until it restarted.
        ignoreAuthErrorAbort: true,
        pingInterval: PING_INTERVAL_MS,
        maxPingOut: MAX_PINGS_OUT,
      });
    } catch (error) {
      throw new FleetError('unavailable', `cannot reach the bus at ${servers.join(',')}: ${(error as Error).message}`, {
        hint: 'Start NATS there (nats-server -p 4222 --auth TOKEN), or correct --bus and its credentials.',
      });
    }
    const warnings: string[] = [];
    if (!options.insecure) {
      if (await takesStrangers(servers, tls)) {
        await nc.close();
        throw new FleetError(
          'invalid_argument',
          `the bus at ${servers.join(',')} lets in clients without credentials, so anyone who reaches it joins the cluster's bus`,
          {
            hint: 'Make NATS require credentials (nats-server --auth TOKEN, nkey users, or TLS with verify); --bus-insecure starts the broker anyway.',
          },
        );
      }
    } else {
      log.warn(INSECURE_BUS_WARNING, { bus: servers.join(',') });
      warnings.push(INSECURE_BUS_WARNING);
    }
    return new Bus(nc, trust, log, warnings);
  }

  get connected(): boolean {
    return this.connectedNow && !this.nc.isClosed();
  }

  /** Why the bus cannot carry messages now, or undefined when it can (for /readyz). */
  problem(): string | undefined {
    if (this.nc.isClosed()) return 'closed';
    return this.connectedNow ? undefined : 'disconnected from NATS; reconnecting';
  }

  /** Publishes a message signed by this broker, for every broker listening on `subject`. */
  publish(subject: string, message: unknown, reply?: string): void {
    this.publishJson(subject, JSON.stringify(message), reply);
  }

  /** The same, for a message already made JSON. */
  publishJson(subject: string, json: string, reply?: string): void {
    this.send(subject, () => this.trust.sign(subject, encoder.encode(json)), reply);
  }

  /**
   * Publishes a message only `recipients` can read (calls and their answers,
   * which may carry secrets). Recipients this broker has no keys for yet are
   * left out; `sign` also signs it (the recipients may forward nothing as if
   * it came from here).
   */
  publishSealed(subject: string, message: unknown, recipients: readonly string[], options: { reply?: string; sign?: boolean } = {}): void {
    this.publishSealedJson(subject, JSON.stringify(message), recipients, options);
  }

  /** The same, for a message already made JSON. */
  publishSealedJson(subject: string, json: string, recipients: readonly string[], options: { reply?: string; sign?: boolean } = {}): void {
    const known = recipients.filter((recipient) => this.trust.knows(recipient));
    this.send(subject, () => this.trust.seal(subject, encoder.encode(json), known, options.sign ?? false), options.reply);
  }

  /** Whether a message can be sealed to this broker now. */
  knows(brokerId: string): boolean {
    return this.trust.knows(brokerId);
  }

  /** Counts a message that checked out but was not acted on, saying why (bus-trust.ts). */
  refuse(reason: Parameters<BusTrust['drop']>[0], fields: Parameters<BusTrust['drop']>[1]): void {
    this.trust.drop(reason, fields);
  }

  private send(subject: string, envelope: () => Buffer, reply: string | undefined): void {
    if (this.nc.isClosed()) return;
    try {
      this.nc.publish(subject, envelope(), reply ? { reply } : undefined);
    } catch (error) {
      this.log.debug('bus publish failed', { subject, error: (error as Error).message });
    }
  }

  /**
   * Calls `onMessage` with each believed message on `subject` that `schema`
   * accepts; the rest are dropped and counted. `raw` is the NATS message (for
   * its reply subject).
   */
  subscribe<S extends z.ZodType>(subject: string, schema: S, onMessage: (message: BusMessage<z.infer<S>>, raw: Msg) => void): BusSubscription {
    return this.listen(subject, (raw) =>
      this.trust.open(raw.subject, raw.data, (opened) => {
        const message = parseBody(opened, schema);
        if (message === undefined) {
          this.trust.drop('malformed', { subject: raw.subject, sender: opened.sender });
          return;
        }
        onMessage({ sender: opened.sender, message }, raw);
      }),
    );
  }

  /** A subject only this connection listens on, for the replies to one request. */
  inbox(): string {
    return `_INBOX.${crypto.randomUUID().replaceAll('-', '')}`;
  }

  /**
   * Subscribes to believed replies (sealed to this broker), and to the
   * server's "no responders" status (503) on a request nobody took.
   */
  replies<S extends z.ZodType>(subject: string, schema: S, onReply: (reply: BusMessage<z.infer<S>> | 'no_responders') => void): BusSubscription {
    return this.listen(subject, (raw) => {
      if (raw.headers?.code === 503) {
        onReply('no_responders');
        return;
      }
      this.trust.open(raw.subject, raw.data, (opened) => {
        const message = parseBody(opened, schema);
        if (message === undefined) this.trust.drop('malformed', { subject: raw.subject, sender: opened.sender });
        else onReply({ sender: opened.sender, message });
      });
    });
  }

  /** Nothing is heard once the bus is closing: the broker is shutting down. */
  private listen(subject: string, onMessage: (raw: Msg) => void): BusSubscription {
    if (this.nc.isClosed() || this.nc.isDraining()) return { unsubscribe: () => {} };
    const subscription = this.nc.subscribe(subject, {
      callback: (error, raw) => {
        if (!error) onMessage(raw);
      },
    });
    return {
      unsubscribe: () => {
        if (this.nc.isClosed() || subscription.isClosed()) return;
        try {
          subscription.unsubscribe();
        } catch {
          // Draining already ends it.
        }
      },
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch {
      await this.nc.close().catch(() => {});
    }
  }

  private async watch(): Promise<void> {
    // Why the connection is about to drop, when the client or the server said: the disconnect itself does not.
    let why: string | undefined;
    /** The last error logged, when, and how many of the same came since. */
    let logged = { error: '', atMs: 0, since: 0 };
    for await (const status of this.nc.status()) {
      if (status.type === 'staleConnection') why = `no answer to ${MAX_PINGS_OUT} pings in a row (this broker's loop may have been held)`;
      else if (status.type === 'error') {
        why = status.error.message;
        // While disconnected too: a reconnect the server refuses says why only here, every half second or so.
        const now = Date.now();
        if (why === logged.error && now - logged.atMs < REPEATED_ERROR_LOG_MS) logged.since += 1;
        else {
          const repeated = why === logged.error ? { repeated: logged.since + 1 } : {};
          this.log.info('the bus server reported an error', { error: why, connected: this.connectedNow, ...repeated });
          logged = { error: why, atMs: now, since: 0 };
        }
      } else if (status.type === 'disconnect' && this.connectedNow) {
        this.connectedNow = false;
        this.log.warn('disconnected from the bus; reconnecting', { server: status.server, ...(why ? { reason: why } : {}) });
        why = undefined;
        this.emit('disconnected');
      } else if (status.type === 'reconnect') {
        this.connectedNow = true;
        logged = { error: '', atMs: 0, since: 0 };
        this.log.info('reconnected to the bus', { server: status.server });
        this.emit('reconnected');
      }
    }
  }
}

function parseBody<S extends z.ZodType>(opened: OpenedMessage, schema: S): z.infer<S> | undefined {
  try {
    const result = schema.safeParse(JSON.parse(opened.body.toString('utf8')));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
