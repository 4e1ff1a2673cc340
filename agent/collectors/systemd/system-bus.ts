import type { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import type { Message, MessageBus } from '@jellybrick/dbus-next';
import { FleetError } from '../../../shared/errors/fleet-error.ts';

type DBusLibrary = typeof import('@jellybrick/dbus-next');

/**
 * The D-Bus client, loaded the first time a bus socket is there to connect
 * to: with its XML parser it is several MiB of an idle agent's memory, which a
 * host without systemd never needs.
 */
let library: DBusLibrary | undefined;

async function dbusLibrary(): Promise<DBusLibrary> {
  library ??= await import('@jellybrick/dbus-next');
  return library;
}

/** The bus emits `error` (a socket that fails, a handshake refused) though its typed events leave it out. */
function errorsOf(bus: MessageBus): EventEmitter {
  return bus as unknown as EventEmitter;
}

/** One method call on the bus. */
export interface BusCall {
  destination: string;
  path: string;
  interface: string;
  member: string;
  signature?: string;
  body?: unknown[];
}

/** A signal on the bus: who sent it and what it says. */
export interface BusSignal {
  path: string;
  interface: string;
  member: string;
  body: unknown[];
}

/** How long connecting (socket, authentication, Hello) may take before the bus counts as unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;

/** D-Bus errors that mean the caller may not, rather than that something broke. */
const REFUSALS = new Set(['org.freedesktop.DBus.Error.AccessDenied', 'org.freedesktop.DBus.Error.InteractiveAuthorizationRequired']);

/** A bus error as fleetmesh's: a unit that does not exist, a refusal, or a failure of the bus or systemd. */
export function busFailure(error: unknown, what: string): FleetError {
  if (error instanceof FleetError) return error;
  // Only a loaded library makes its errors.
  if (library && error instanceof library.DBusError) {
    if (error.type === 'org.freedesktop.systemd1.NoSuchUnit') {
      return new FleetError('not_found', `${what}: ${error.text}`, { hint: 'service_list lists the units of the host.' });
    }
    if (REFUSALS.has(error.type)) {
      return new FleetError('forbidden', `${what}: systemd refused (${error.text})`, {
        hint: 'The agent must run as root (or be allowed by polkit) to manage units.',
      });
    }
    return new FleetError('collector_failed', `${what}: ${error.type}: ${error.text}`, { collector: 'systemd' });
  }
  return new FleetError('collector_failed', `${what}: ${(error as Error).message}`, { collector: 'systemd' });
}

/**
 * The system bus, connected on first use and again after it is lost: method
 * calls that never hang past their deadline (the library leaves a call pending
 * when the connection drops), and the signals the collector subscribed to.
 */
export class SystemBus {
  private bus: Promise<MessageBus> | undefined;
  private readonly pending = new Set<(error: Error) => void>();

  constructor(
    private readonly socket: string,
    /** Called with every signal; `onConnect` runs the subscriptions each new connection needs. */
    private readonly hooks: { onSignal(signal: BusSignal): void; onConnect(bus: SystemBus): Promise<void> },
  ) {}

  /** Calls a method and answers its reply's body. */
  async call(call: BusCall, timeoutMs: number): Promise<unknown[]> {
    const bus = await this.connected();
    return new Promise<unknown[]>((resolve, reject) => {
      const fail = (error: Error) => finish(() => reject(error));
      // A call left unanswered may be one the library lost with its connection (it does not tell of a closed
      // socket): the next call connects afresh.
      const timer = setTimeout(() => {
        fail(new FleetError('deadline_exceeded', `${call.member} on the system bus did not answer in ${timeoutMs} ms`));
        this.lost(bus, new Error('a call was not answered'));
      }, timeoutMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.pending.delete(fail);
        settle();
      };
      this.pending.add(fail);
      bus.call(new (library as DBusLibrary).Message({ ...call, signature: call.signature ?? '', body: call.body ?? [] })).then(
        (reply) => finish(() => resolve(reply?.body ?? [])),
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }

  /** Asks the bus to route signals that match a rule to this connection. */
  async addMatch(rule: string, timeoutMs: number): Promise<void> {
    await this.call(
      {
        destination: 'org.freedesktop.DBus',
        path: '/org/freedesktop/DBus',
        interface: 'org.freedesktop.DBus',
        member: 'AddMatch',
        signature: 's',
        body: [rule],
      },
      timeoutMs,
    );
  }

  close(): void {
    const bus = this.bus;
    this.bus = undefined;
    void bus?.then((connected) => connected.disconnect()).catch(() => undefined);
  }

  private connected(): Promise<MessageBus> {
    this.bus ??= this.connect().catch((error: unknown) => {
      this.bus = undefined;
      throw new FleetError('collector_unavailable', `the system bus at ${this.socket} cannot be reached: ${(error as Error).message}`, {
        collector: 'systemd',
        hint: "In a container, mount the host's /run/dbus/system_bus_socket and pass --system-bus; on a host without systemd there are no units.",
        cause: error,
      });
    });
    return this.bus;
  }

  private async connect(): Promise<MessageBus> {
    if (!existsSync(this.socket)) throw new Error('no such socket');
    const { sessionBus, MessageType } = await dbusLibrary();
    const bus = sessionBus({ busAddress: `unix:path=${this.socket}`, authMethods: ['EXTERNAL'] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer in ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      bus.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      errorsOf(bus).once('error', (error: Error) => {
        clearTimeout(timer);
        reject(error);
      });
    }).catch((error: unknown) => {
      bus.disconnect();
      throw error;
    });
    // A connection lost later fails what waits on it, and the next call connects again.
    errorsOf(bus).on('error', (error: Error) => this.lost(bus, error));
    bus.on('message', (message: Message) => {
      if (message.type === MessageType.SIGNAL) {
        this.hooks.onSignal({ path: message.path, interface: message.interface, member: message.member, body: message.body });
      }
    });
    const current = Promise.resolve(bus);
    this.bus = current;
    await this.hooks.onConnect(this);
    return bus;
  }

  private lost(bus: MessageBus, error: Error): void {
    void this.bus?.then((current) => {
      if (current !== bus) return;
      this.bus = undefined;
      bus.disconnect();
      for (const fail of [...this.pending])
        fail(new FleetError('collector_failed', `the system bus connection was lost: ${error.message}`, { collector: 'systemd' }));
    });
  }
}
