import type { Notice } from '../../index/notice.ts';
import type { Channel } from './notify-options.ts';

/** One notification: a notice of the fleet index, or the notifier's own (an agent offline, a test). */
export type Notification = Notice;

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
