import type { NOTIFY_CHANNELS } from '../../../shared/domains/notify/notify-actions.ts';
import type { NOTIFY_FLAGS } from '../../../shared/domains/notify/notify-flags.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { FlagValues } from '../../../shared/options/command-line.ts';
import { readSecretFile } from '../../../shared/options/secret-file.ts';

/** The channels notifications go to, each at a base URL of the operator's choosing (a self-hosted server, a proxy, a test receiver). */
export type ChannelKind = (typeof NOTIFY_CHANNELS)[number];

export interface Channel {
  kind: ChannelKind;
  /** webhook, slack, discord: where to POST; ntfy: server and topic; gotify: the server; telegram: the Bot API base. */
  url: string;
  /** ntfy (optional), gotify, telegram: read from a file, never logged or returned. */
  token?: string;
  /** telegram: the chat to write to. */
  chatId?: string;
}

export interface NotifyOptions {
  channels: Channel[];
  /** An agent offline this long is notified about (once per outage). */
  offlineAfterMs: number;
  /** The same notification (same host and subject) is not sent again within this time. */
  repeatAfterMs: number;
}

export const NO_NOTIFICATIONS: NotifyOptions = { channels: [], offlineAfterMs: 5 * 60_000, repeatAfterMs: 30 * 60_000 };

function checkedUrl(value: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new FleetError('invalid_argument', `${flag} "${value}" is not a URL`, { hint: 'Give an http:// or https:// URL.' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FleetError('invalid_argument', `${flag} must be an http:// or https:// URL`);
  return value.replace(/\/+$/, '');
}

/** The channels the notify flags configure; a channel missing what it needs stops the broker with one line. */
export function resolveNotifyOptions(values: FlagValues<typeof NOTIFY_FLAGS>): NotifyOptions {
  const channels: Channel[] = [];
  const url = (kind: ChannelKind) => {
    const value = values[`notify-${kind}`];
    return value === undefined ? undefined : checkedUrl(value, `--notify-${kind}`);
  };
  const webhook = url('webhook');
  if (webhook) channels.push({ kind: 'webhook', url: webhook });
  const ntfy = url('ntfy');
  if (ntfy) {
    const tokenFile = values['notify-ntfy-token-file'];
    channels.push({ kind: 'ntfy', url: ntfy, ...(tokenFile ? { token: readSecretFile(tokenFile, '--notify-ntfy-token-file') } : {}) });
  }
  const gotify = url('gotify');
  if (gotify) {
    const tokenFile = values['notify-gotify-token-file'];
    if (!tokenFile) throw new FleetError('invalid_argument', '--notify-gotify needs --notify-gotify-token-file (the application token)');
    channels.push({ kind: 'gotify', url: gotify, token: readSecretFile(tokenFile, '--notify-gotify-token-file') });
  }
  const slack = url('slack');
  if (slack) channels.push({ kind: 'slack', url: slack });
  const discord = url('discord');
  if (discord) channels.push({ kind: 'discord', url: discord });
  const telegram = url('telegram');
  if (telegram) {
    const tokenFile = values['notify-telegram-token-file'];
    const chat = values['notify-telegram-chat'];
    if (!tokenFile || !chat) throw new FleetError('invalid_argument', '--notify-telegram needs --notify-telegram-token-file and --notify-telegram-chat');
    channels.push({ kind: 'telegram', url: telegram, token: readSecretFile(tokenFile, '--notify-telegram-token-file'), chatId: chat });
  }
  return { channels, offlineAfterMs: values['notify-offline-after'], repeatAfterMs: values['notify-repeat-after'] };
}
