import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';

/** The channel kinds the broker can notify through (its --notify-* flags). */
export const NOTIFY_CHANNELS = ['webhook', 'ntfy', 'gotify', 'slack', 'discord', 'telegram'] as const;

export const notifyTest = defineAction({
  id: 'notify.test',
  tool: 'notify_test',
  risk: 'write',
  level: 1,
  runsOn: 'broker',
  collector: null,
  title: 'Test notifications',
  description: 'Sends a test message to each configured notification channel (webhook, ntfy, Gotify, Slack, Discord, Telegram) and reports each result.',
  input: z.object({ message: z.string().max(500).optional().describe('default: a fixed test line') }).strict(),
  output: z.object({
    channels: z.array(
      z.object({
        channel: z.enum(NOTIFY_CHANNELS),
        origin: z.string().describe('Scheme, host and port of the channel; never the path, which may hold a secret.'),
        ok: z.boolean(),
        status: z.number().nullable().describe('The HTTP status the channel answered, or null when none came.'),
        error: z.string().optional(),
        duration_ms: z.number(),
      }),
    ),
    sent: z.number(),
    failed: z.number(),
  }),
  openWorld: true,
  table: { list: 'channels', columns: ['channel', 'origin', 'ok', 'status', 'error', 'duration_ms'] },
});
