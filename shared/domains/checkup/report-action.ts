import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { DOCTOR_PARTS } from '../parts.ts';

/** What changed since the previous snapshot: a vocabulary, to branch on. */
const CHANGE_KINDS = [
  'container_gone',
  'container_new',
  'container_replaced',
  'image_changed',
  'state_changed',
  'ports_changed',
  'disk_usage_changed',
  'disk_new',
  'disk_gone',
  'section_skipped',
] as const;

export const notableChangeShape = z.object({
  kind: z.enum(CHANGE_KINDS),
  subject: z.string().describe('The container name, mount point or section the change is about.'),
  before: z.string().nullable().describe('For section_skipped: collected or not collected (null: no previous report).'),
  after: z.string().nullable(),
});

export const attentionShape = z.object({
  // The domains' doctor checks may add what needs attention too (a failed unit), under their check's name.
  kind: z.enum([
    'container_down',
    'container_unhealthy',
    'container_restarting',
    'disk_full',
    'memory_high',
    'cpu_high',
    'zombie_processes',
    ...DOCTOR_PARTS.flatMap((part) => part.checks),
  ]),
  subject: z.string(),
  severity: z.enum(['warning', 'critical']),
  value: z.number().nullable().describe('The figure behind it (a percentage, a restart or zombie count), when there is one.'),
});

export const suggestedActionShape = z.object({
  tool: z.string().describe('The fleetmesh tool to run next.'),
  arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  reason: z.string(),
});

export const report = defineAction({
  id: 'checkup.report',
  tool: 'report',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'checkup',
  title: 'Host report',
  description:
    'Changes on a host since its last report (containers, images, states, ports, disks), what needs attention, what to run next; saves a snapshot unless no_save.',
  input: z
    .object({
      keep: z.number().int().min(1).max(1000).optional().describe('default 30'),
      no_save: z.boolean().optional(),
    })
    .strict(),
  output: z.object({
    schema_version: z.literal(1),
    status: z.enum(['ok', 'warning', 'critical']),
    changed: z.boolean().describe('Whether anything changed since the previous snapshot (false for the first one).'),
    needs_attention: z.array(attentionShape),
    notable_changes: z.array(notableChangeShape),
    suggested_actions: z.array(suggestedActionShape),
    containers_running: z.number().nullable(),
    containers_total: z.number().nullable(),
    previous_at_unix_ms: z.number().nullable().describe('When the snapshot compared against was taken; null for the first report.'),
    saved: z.boolean(),
    snapshots_kept: z.number(),
    sampled_at_unix_ms: z.number(),
  }),
  idempotent: false,
  table: {
    columns: ['status', 'changed', 'containers_running', 'previous_at_unix_ms'],
    first: 'changed',
    details: ['needs_attention', 'notable_changes', 'suggested_actions'],
  },
  related: ['checkup.doctor', 'docker.list'],
});
