import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';

export const collectorStatusShape = z.object({
  name: z.string(),
  available: z.boolean(),
  reason: z.string().describe('Why the collector is unavailable; empty when it is available.'),
  absent: z.boolean().optional().describe('Unavailable because there is nothing to collect on this host (not a failure).'),
});

export const hostSampleShape = z.object({
  cpu_percent: z.number().nullable(),
  memory_percent: z.number().nullable(),
  memory_used_bytes: z.number().nullable(),
  memory_total_bytes: z.number().nullable(),
  disk_percent: z.number().nullable().describe('Usage of the fullest disk.'),
  disk_mount: z.string().nullable(),
  load_1: z.number().nullable(),
  containers_running: z.number().nullable(),
  containers_total: z.number().nullable(),
  net_rx_bytes: z.number().nullable().describe('Bytes received on every interface but loopback, since boot.'),
  net_tx_bytes: z.number().nullable(),
  sampled_at_unix_ms: z.number(),
});

const labelsShape = z.record(z.string(), z.string());

export const agentInfo = defineAction({
  id: 'agent.info',
  tool: 'agent_info',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'agent',
  title: 'Agent info',
  description:
    'The agent on a host: version, uptime, collectors (and why any is unavailable), labels, host facts; with watch_ms it streams samples first and answers with all.',
  input: z
    .object({
      watch_ms: z.number().int().min(0).max(60_000).optional().describe('Stream a sample every interval_ms for this long first.'),
      interval_ms: z.number().int().min(100).max(10_000).optional().describe('default 1000'),
    })
    .strict(),
  output: z.object({
    agent_id: z.string(),
    name: z.string(),
    version: z.string(),
    protocol_version: z.number(),
    uptime_s: z.number(),
    started_at_unix_ms: z.number(),
    collectors: z.array(collectorStatusShape),
    labels: labelsShape,
    facts: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    sample: hostSampleShape.nullable(),
    /** With watch_ms: every sample that streamed, oldest first, so the answer holds what progress showed. */
    samples: z.array(z.object({ uptime_s: z.number(), sample: hostSampleShape })).optional(),
    certificate_not_after_unix_ms: z.number(),
  }),
  table: { columns: ['version', 'uptime_s', 'collectors', 'labels'] },
  related: ['fleet.list_agents'],
  waitsMs: (params) => params.watch_ms ?? 0,
});

export const agentSetLabels = defineAction({
  id: 'agent.set_labels',
  tool: 'set_agent_labels',
  risk: 'write',
  setsLabels: true,
  level: 2,
  runsOn: 'host',
  collector: 'agent',
  title: 'Set agent labels',
  description: 'Patches the labels selectors match (a string sets, null removes, others stay); labels fixed by the join token stay.',
  input: z
    .object({
      labels: z.record(
        z.string().regex(/^[A-Za-z0-9]([A-Za-z0-9._/-]{0,62}[A-Za-z0-9])?$/),
        z
          .string()
          .regex(/^[A-Za-z0-9._:/@+-]{0,128}$/)
          .nullable(),
      ),
    })
    .strict(),
  output: z.object({ labels: labelsShape.describe('The labels the agent reports now.') }),
  idempotent: true,
  table: { columns: ['labels'] },
  related: ['fleet.list_agents'],
});
