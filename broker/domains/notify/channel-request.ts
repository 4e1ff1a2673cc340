import type { Channel } from './notify-options.ts';

/** One notification, in words a person reads on a phone. */
export interface Notification {
  /** What it is about: `incident`, `alert`, `offline` or `test`. */
  event: 'incident' | 'alert' | 'offline' | 'test';
  severity: 'info' | 'warning' | 'critical';
  title: string;
  text: string;
  host?: string;
  /** The same key within the repeat window is sent once. */
  key: string;
  time_unix_ms: number;
  /** The structured facts behind it (the incident, the crossing), for the webhook channel. */
  details?: unknown;
}

interface ChannelRequest {
  url: string;
  init: RequestInit;
}

const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** The HTTP request each channel's API takes for one notification. */
export function channelRequest(channel: Channel, notification: Notification): ChannelRequest {
  const line = `${notification.title}\n${notification.text}`;
  switch (channel.kind) {
    case 'webhook':
      return { url: channel.url, init: json(notification) };
    case 'ntfy':
      return {
        url: channel.url,
        init: {
          method: 'POST',
          headers: {
            Title: notification.title,
            Priority: notification.severity === 'critical' ? '5' : notification.severity === 'warning' ? '4' : '3',
            Tags: `fleetmesh,${notification.event}`,
            ...(channel.token ? { Authorization: `Bearer ${channel.token}` } : {}),
          },
          body: notification.text,
        },
      };
    case 'gotify':
      return {
        url: `${channel.url}/message`,
        init: json(
          {
            title: notification.title,
            message: notification.text,
            priority: notification.severity === 'critical' ? 8 : notification.severity === 'warning' ? 5 : 2,
          },
          { 'X-Gotify-Key': channel.token ?? '' },
        ),
      };
    case 'slack':
      return { url: channel.url, init: json({ text: line }) };
    case 'discord':
      return { url: channel.url, init: json({ content: line.slice(0, 2000) }) };
    case 'telegram':
      return { url: `${channel.url}/bot${channel.token ?? ''}/sendMessage`, init: json({ chat_id: channel.chatId, text: line.slice(0, 4096) }) };
  }
}

/** A channel's address as results and logs show it: scheme, host and port only (paths of webhooks hold secrets). */
export function channelOrigin(channel: Channel): string {
  return new URL(channel.url).origin;
}
