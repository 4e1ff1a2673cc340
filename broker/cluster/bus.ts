import { EventEmitter } from 'node:events';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';

export interface BusOptions {
  /** `nats://[user:password@|token@]host:port[,host:port…]` */
  url: string;
  /** A token read from --bus-token-file; wins over one in the URL. */
  token: string | undefined;
  /** This broker's name on the bus (client name, for the NATS monitoring pages). */
  brokerId: string;
}

/** A subscription on the bus; ending it twice, or after the bus closed, is harmless. */
export interface BusSubscription {
  unsubscribe(): void;
}

interface BusEvents {
  /** The connection to NATS came back: what others missed must be said again. */
  reconnected: [];
  disconnected: [];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The servers and credentials of a bus URL, which may list several servers after the first. */
export function parseBusUrl(url: string): { servers: string[]; user?: string; pass?: string; token?: string } {
  const [first = '', ...more] = url.split(',');
  let parsed: URL;
  try {
    parsed = new URL(first);
  } catch {
    throw new FleetError('invalid_argument', `--bus ${JSON.stringify(url)} is not a URL`, {
      hint: 'Give it as nats://HOST:4222 (with user:password@ or token@ when NATS asks for them).',
    });
  }
  if (parsed.protocol !== 'nats:' && parsed.protocol !== 'tls:') {
    throw new FleetError('invalid_argument', `--bus must be a nats:// URL, not ${parsed.protocol}//`, { hint: 'Give it as nats://HOST:4222.' });
  }
  const servers = [`${parsed.protocol}//${parsed.host}`, ...more.map((server) => server.trim()).filter((server) => server !== '')];
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  if (user && pass) return { servers, user, pass };
  if (user) return { servers, token: user };
  return { servers };
}

/**
 * The broker's connection to NATS: JSON messages on fleetmesh subjects, a
 * reconnect that never gives up, and whether it is connected now (for
 * /readyz and for refusing cluster-wide work while it is not). Only brokers
 * talk on the bus; NATS itself should be private and authenticated.
 */
export class Bus extends EventEmitter<BusEvents> {
  private connectedNow = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
  ) {
    super();
    void this.watch();
  }

  static async open(options: BusOptions, log: Logger): Promise<Bus> {
    const { servers, user, pass, token } = parseBusUrl(options.url);
    try {
      const nc = await connect({
        servers,
        name: `fleetmesh-broker ${options.brokerId}`,
        ...(user !== undefined ? { user, pass } : {}),
        ...((options.token ?? token) !== undefined ? { token: options.token ?? token } : {}),
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        pingInterval: 5000,
        maxPingOut: 2,
      });
      return new Bus(nc, log);
    } catch (error) {
      throw new FleetError('unavailable', `cannot reach the bus at ${servers.join(',')}: ${(error as Error).message}`, {
        hint: 'Start NATS there (nats-server -p 4222), or correct --bus and its credentials.',
      });
    }
  }

  get connected(): boolean {
    return this.connectedNow && !this.nc.isClosed();
  }

  /** Why the bus cannot carry messages now, or undefined when it can (for /readyz). */
  problem(): string | undefined {
    if (this.nc.isClosed()) return 'closed';
    return this.connectedNow ? undefined : 'disconnected from NATS; reconnecting';
  }

  publish(subject: string, message: unknown, reply?: string): void {
    if (this.nc.isClosed()) return;
    try {
      this.nc.publish(subject, encoder.encode(JSON.stringify(message)), reply ? { reply } : undefined);
    } catch (error) {
      this.log.debug('bus publish failed', { subject, error: (error as Error).message });
    }
  }

  /**
   * Calls `onMessage` with each message on `subject` that `schema` accepts;
   * others are logged and dropped. `raw` is the NATS message (for its reply subject).
   */
  subscribe<S extends z.ZodType>(subject: string, schema: S, onMessage: (message: z.infer<S>, raw: Msg) => void): BusSubscription {
    return this.listen(subject, (raw) => {
      const parsed = parseMessage(raw, schema);
      if (parsed === undefined) {
        this.log.warn('bus message dropped: not a fleetmesh message', { subject: raw.subject });
        return;
      }
      onMessage(parsed, raw);
    });
  }

  /** A subject only this connection listens on, for the replies to one request. */
  inbox(): string {
    return `_INBOX.${crypto.randomUUID().replaceAll('-', '')}`;
  }

  /** Subscribes to replies, including the server's "no responders" status (503) on a request nobody took. */
  replies(subject: string, onReply: (reply: Msg | 'no_responders') => void): BusSubscription {
    return this.listen(subject, (raw) => onReply(raw.headers?.code === 503 ? 'no_responders' : raw));
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
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch {
      await this.nc.close().catch(() => {});
    }
  }

  private async watch(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect' && this.connectedNow) {
        this.connectedNow = false;
        this.log.warn('disconnected from the bus; reconnecting', { server: status.server });
        this.emit('disconnected');
      } else if (status.type === 'reconnect') {
        this.connectedNow = true;
        this.log.info('reconnected to the bus', { server: status.server });
        this.emit('reconnected');
      }
    }
  }
}

export function parseMessage<S extends z.ZodType>(raw: Msg, schema: S): z.infer<S> | undefined {
  try {
    const result = schema.safeParse(JSON.parse(decoder.decode(raw.data)));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
