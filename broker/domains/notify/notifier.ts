import type { Logger } from '../../../shared/log/logger.ts';
import type { AgentRegistry, Host } from '../../agents/agent-registry.ts';
import type { FleetIndex } from '../../index/fleet-index.ts';
import { channelOrigin, channelRequest, type Notification } from './channel-request.ts';
import type { Channel, ChannelKind, NotifyOptions } from './notify-options.ts';

/** How one channel took one notification. */
export interface Delivery {
  channel: ChannelKind;
  /** Scheme, host and port of the channel (never the path, which may hold a secret). */
  origin: string;
  ok: boolean;
  /** The HTTP status, or null when no answer came. */
  status: number | null;
  error?: string;
  duration_ms: number;
}

/** A channel that does not answer within this is a failed delivery, and the next one is not held up. */
const SEND_TIMEOUT_MS = 10_000;

interface NotifierOptions {
  notify: NotifyOptions;
  registry: AgentRegistry;
  index: FleetIndex;
  log: Logger;
}

/**
 * Sends the fleet's notifications to every configured channel: each notice
 * the fleet index's domains raise from what agents report (a watched
 * container's restart, a host crossing a threshold), and an agent offline
 * for longer than the threshold (then back online). The same subject (host and
 * container, or host) is sent once per repeat window, so a flapping container
 * makes one notification, not one per restart. Incident text is the fleet's
 * words and is quoted as such.
 */
export class Notifier {
  private readonly sentAt = new Map<string, number>();
  private readonly offlineTimers = new Map<string, NodeJS.Timeout>();
  private readonly offlineNotified = new Set<string>();

  constructor(private readonly options: NotifierOptions) {}

  get channels(): readonly Channel[] {
    return this.options.notify.channels;
  }

  start(): void {
    if (this.channels.length === 0) return;
    this.options.index.on('notice', (notice) => void this.notify(notice));
    this.options.registry.on('state', (host) => this.onState(host));
    this.options.registry.on('revoked', (host) => this.clearOffline(host.id));
  }

  stop(): void {
    for (const timer of this.offlineTimers.values()) clearTimeout(timer);
    this.offlineTimers.clear();
  }

  /** Sends one notification to every channel unless the same key went out within the repeat window; undefined when held back. */
  async notify(notification: Notification): Promise<Delivery[] | undefined> {
    const last = this.sentAt.get(notification.key);
    if (last !== undefined && notification.time_unix_ms - last < this.options.notify.repeatAfterMs) return undefined;
    this.sentAt.set(notification.key, notification.time_unix_ms);
    const deliveries = await this.send(notification);
    for (const failed of deliveries.filter((d) => !d.ok)) {
      this.options.log.warn('notification not delivered', { channel: failed.channel, origin: failed.origin, status: failed.status, error: failed.error });
    }
    return deliveries;
  }

  /** Sends to every channel at once, whatever was sent before; each channel's result. */
  async send(notification: Notification): Promise<Delivery[]> {
    return Promise.all(this.channels.map((channel) => deliver(channel, notification)));
  }

  private onState(host: Host): void {
    if (host.state === 'offline') {
      if (this.offlineTimers.has(host.id)) return;
      const timer = setTimeout(() => {
        this.offlineTimers.delete(host.id);
        if (host.state !== 'offline') return;
        this.offlineNotified.add(host.id);
        const minutes = Math.round(this.options.notify.offlineAfterMs / 60_000);
        void this.notify({
          event: 'offline',
          severity: 'critical',
          title: `fleetmesh: agent ${host.name} is offline`,
          text: `Agent "${host.name}" has been offline for ${minutes >= 1 ? `${minutes} min` : `${Math.round(this.options.notify.offlineAfterMs / 1000)} s`} (last seen ${host.lastSeenAt ? new Date(host.lastSeenAt).toISOString() : 'never'}).`,
          host: host.name,
          key: `offline:${host.id}`,
          time_unix_ms: Date.now(),
        });
      }, this.options.notify.offlineAfterMs);
      timer.unref();
      this.offlineTimers.set(host.id, timer);
      return;
    }
    const wasNotified = this.offlineNotified.has(host.id);
    this.clearOffline(host.id);
    if (wasNotified && host.state === 'online') {
      void this.send({
        event: 'offline',
        severity: 'info',
        title: `fleetmesh: agent ${host.name} is back online`,
        text: `Agent "${host.name}" is connected again.`,
        host: host.name,
        key: `online:${host.id}`,
        time_unix_ms: Date.now(),
      });
    }
  }

  private clearOffline(hostId: string): void {
    clearTimeout(this.offlineTimers.get(hostId));
    this.offlineTimers.delete(hostId);
    this.offlineNotified.delete(hostId);
    this.sentAt.delete(`offline:${hostId}`);
  }
}

async function deliver(channel: Channel, notification: Notification): Promise<Delivery> {
  const started = performance.now();
  const origin = channelOrigin(channel);
  const took = () => Math.round(performance.now() - started);
  try {
    const { url, init } = channelRequest(channel, notification);
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(SEND_TIMEOUT_MS), redirect: 'manual' });
    await response.arrayBuffer().catch(() => undefined);
    return {
      channel: channel.kind,
      origin,
      ok: response.ok,
      status: response.status,
      ...(response.ok ? {} : { error: `the channel answered HTTP ${response.status}` }),
      duration_ms: took(),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${SEND_TIMEOUT_MS / 1000} s` : (cause ?? (error as Error).message);
    return { channel: channel.kind, origin, ok: false, status: null, error: `could not reach the channel: ${reason}`, duration_ms: took() };
  }
}
