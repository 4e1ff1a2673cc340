import type { FlagSpecs } from '../../options/command-line.ts';

/** The `fleetmesh broker` flags of the notification channels (resolved in broker/domains/notify/notify-options.ts). */
export const NOTIFY_FLAGS = {
  'notify-webhook': {
    type: 'string',
    description: 'POST a JSON notification to this URL on incidents, alert crossings and agents offline',
    placeholder: 'URL',
  },
  'notify-ntfy': { type: 'string', description: 'publish notifications to this ntfy server and topic (https://ntfy.sh/TOPIC)', placeholder: 'URL' },
  'notify-ntfy-token-file': { type: 'string', description: 'file holding an ntfy access token', placeholder: 'FILE' },
  'notify-gotify': { type: 'string', description: 'send notifications to this Gotify server (with --notify-gotify-token-file)', placeholder: 'URL' },
  'notify-gotify-token-file': { type: 'string', description: 'file holding the Gotify application token', placeholder: 'FILE' },
  'notify-slack': { type: 'string', description: 'a Slack incoming-webhook URL', placeholder: 'URL' },
  'notify-discord': { type: 'string', description: 'a Discord webhook URL', placeholder: 'URL' },
  'notify-telegram': {
    type: 'string',
    description: 'the Telegram Bot API base (https://api.telegram.org), with --notify-telegram-token-file and --notify-telegram-chat',
    placeholder: 'URL',
  },
  'notify-telegram-token-file': { type: 'string', description: 'file holding the Telegram bot token', placeholder: 'FILE' },
  'notify-telegram-chat': { type: 'string', description: 'the Telegram chat id to write to', placeholder: 'ID' },
  'notify-offline-after': {
    type: 'duration',
    description: 'notify when an agent has been offline this long',
    default: '5m',
    min: 1000,
    placeholder: 'DURATION',
  },
  'notify-repeat-after': {
    type: 'duration',
    description: 'send the same notification (same host and subject) again only after this long',
    default: '30m',
    min: 0,
    placeholder: 'DURATION',
  },
} as const satisfies FlagSpecs;
