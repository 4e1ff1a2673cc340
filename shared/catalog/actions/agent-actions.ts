import { z } from 'zod';
import { defineAction } from '../action.ts';

export const collectorStatusShape = z.object({
  name: z.string(),
  available: z.boolean(),
  reason: z.string().describe('Why the collector is unavailable; empty when it is available.'),
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
  sampled_at_unix_ms: z.number(),
});

export const agentInfo = defineAction({
  id: 'agent.info',
  tool: 'agent_info',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'agent',
  title: 'Agent info',
  description:
    'What the fleetmesh agent on a host is: its version, uptime, collectors and whether each is available (with the reason when not), labels and host facts (OS, kernel, architecture, Docker, Swarm role). Cheap; answers from memory. With watch_ms the agent streams a fresh sample every interval_ms for that long.',
  input: z
    .object({
      watch_ms: z.number().int().min(0).max(60_000).optional().describe('Stream a sample every interval_ms for this long before answering (max 60000).'),
      interval_ms: z.number().int().min(100).max(10_000).optional().describe('Time between streamed samples (default 1000).'),
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
    labels: z.record(z.string(), z.string()),
    facts: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    sample: hostSampleShape.nullable(),
    certificate_not_after_unix_ms: z.number(),
  }),
});
