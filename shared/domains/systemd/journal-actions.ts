import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { PRIORITIES } from './systemd-head.ts';

const time = z.union([z.string().max(64), z.number()]);

const unit = z.string().min(1).max(256).describe('A unit, such as nginx or nginx.service.');

export const journalLineShape = z.object({
  timestamp: z.string().describe('RFC 3339.'),
  unit: z.string().nullable(),
  priority: z.enum(PRIORITIES).nullable(),
  identifier: z.string().nullable().describe('The syslog identifier, or the program name.'),
  pid: z.number().nullable(),
  text: z.string(),
});

export const journalQuery = defineAction({
  id: 'systemd.journal_query',
  tool: 'journal_query',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'systemd',
  title: 'Journal',
  description: 'systemd journal lines, newest first, by unit, priority, time, boot or text; next_page pages back.',
  input: z
    .object({
      unit: unit.optional(),
      priority: z.enum(PRIORITIES).optional().describe('This and more severe.'),
      since: time.optional().describe('RFC 3339, unix seconds or a duration ago (1h); until likewise.'),
      until: time.optional(),
      grep: z.string().min(1).max(256).optional().describe('A pattern the message matches.'),
      boot: z.number().int().min(-100).max(0).optional().describe('0 this boot, -1 the one before.'),
      lines: z.number().int().min(1).max(1000).optional().describe('default 50'),
      page: z.string().max(512).optional().describe('A next_page, with its host.'),
    })
    .strict(),
  output: z.object({
    lines: z.array(journalLineShape),
    count: z.number(),
    next_page: z.string().nullable().describe('Pass as page, with this host, for older lines.'),
    truncated_reason: z.string().optional(),
  }),
  table: { list: 'lines', columns: ['timestamp', 'unit', 'priority', 'text'] },
  related: ['systemd.journal_search', 'systemd.service_status'],
});

export const journalSearch = defineAction({
  id: 'systemd.journal_search',
  tool: 'journal_search',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'systemd',
  title: 'Journal search',
  description: 'Which hosts logged a pattern since a time: per host the count of matching lines and the newest ones.',
  input: z
    .object({
      grep: z.string().min(1).max(256),
      since: time.optional().describe('default 24h ago'),
      unit: unit.optional(),
      priority: z.enum(PRIORITIES).optional(),
      lines: z.number().int().min(0).max(20).optional().describe('Newest matches kept, default 3.'),
    })
    .strict(),
  output: z.object({
    matched: z.number().describe('Lines that match since then.'),
    matched_all: z.boolean().describe('false: counting stopped at 100,000.'),
    newest_unix_ms: z.number().nullable(),
    newest_line: z.string().nullable(),
    lines: z.array(journalLineShape).describe('The newest matches, newest first.'),
  }),
  table: { columns: ['matched', 'newest_unix_ms', 'newest_line'] },
  related: ['systemd.journal_query'],
});
