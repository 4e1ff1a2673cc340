import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { collectorStatusShape, hostSampleShape } from '../../domains/agent/agent-actions.ts';

const agentStateShape = z.enum(['online', 'stale', 'offline']);

const agentRowShape = z.object({
  name: z.string(),
  id: z.string(),
  state: agentStateShape,
  version: z.string(),
  labels: z.record(z.string(), z.string()),
  collectors: z.array(collectorStatusShape),
  last_seen_unix_ms: z.number().nullable(),
  state_since_unix_ms: z.number(),
  certificate_not_after_unix_ms: z.number().nullable(),
  sample: hostSampleShape.nullable(),
  claims: z
    .array(z.object({ role: z.string(), object: z.string(), status: z.enum(['approved', 'proven', 'pending']) }))
    .describe('Roles claimed over a shared object (a cluster); pending ones are not served.'),
});

export const listAgents = defineAction({
  id: 'fleet.list_agents',
  tool: 'list_agents',
  risk: 'read',
  level: 0,
  runsOn: 'broker',
  collector: null,
  title: 'List agents',
  description: 'Agents, 40 a page: state, labels, collectors, last seen, sample; the names and labels tools take.',
  input: z
    .object({
      state: agentStateShape.optional(),
      selector: z.string().max(512).optional().describe('Labels to match, such as role=db,env!=dev.'),
      limit: z.number().int().min(1).max(500).optional(),
      offset: z.number().int().min(0).optional(),
    })
    .strict(),
  output: z.object({
    agents: z.array(agentRowShape),
    count: z.number().describe('Agents matching, all pages together.'),
    next_offset: z.number().optional().describe('The offset of the next page, when there is one.'),
  }),
  table: {
    list: 'agents',
    columns: ['name', 'state', 'version', 'labels', 'last_seen_unix_ms'],
    more: "agent_info with host=NAME (or the resource fleet://agents/NAME) gives one agent's every field.",
  },
  widget: 'fleet-table',
  related: ['fleet.status', 'agent.info'],
});

const thresholdsShape = {
  cpu_percent: z.number().min(0).max(100).optional().describe('default 90'),
  memory_percent: z.number().min(0).max(100).optional().describe('default 85'),
  disk_percent: z.number().min(0).max(100).optional().describe('default 90'),
};

export const fleetStatus = defineAction({
  id: 'fleet.status',
  tool: 'get_fleet_status',
  risk: 'read',
  level: 0,
  runsOn: 'broker',
  collector: null,
  title: 'Fleet status',
  description:
    'Start here: fleet health from heartbeats (no fan-out): agents online, stale, offline; hosts over thresholds; failed collectors (absent ones, with nothing to collect, listed apart); certificates expiring within 7 days.',
  input: z.object(thresholdsShape).strict(),
  output: z.object({
    healthy: z.boolean(),
    counts: z.object({ online: z.number(), stale: z.number(), offline: z.number(), total: z.number() }),
    thresholds: z.object({ cpu_percent: z.number(), memory_percent: z.number(), disk_percent: z.number() }),
    hot_hosts: z.array(
      z.object({
        host: z.string(),
        metric: z.enum(['cpu', 'memory', 'disk']),
        value_percent: z.number(),
        threshold_percent: z.number(),
        mount: z.string().optional(),
      }),
    ),
    unavailable_collectors: z
      .array(z.object({ host: z.string(), collector: z.string(), reason: z.string() }))
      .describe('Collectors that should answer and do not (failed).'),
    absent_collectors: z
      .array(z.object({ collector: z.string(), hosts: z.array(z.string()), reason: z.string() }))
      .describe("Collectors with nothing to collect on those hosts (no engine, not in a swarm, not configured): not a failure. reason is the first host's."),
    not_online: z.array(z.object({ host: z.string(), state: agentStateShape, since_unix_ms: z.number() })),
    certificates_expiring: z.array(z.object({ host: z.string(), not_after_unix_ms: z.number() })),
    insecure: z
      .array(z.object({ host: z.string(), what: z.string() }))
      .describe('Hosts running with TLS verification turned off somewhere (a collector in insecure mode).'),
    pending_claims: z.array(z.object({ host: z.string(), role: z.string(), object: z.string() })),
  }),
  related: ['fleet.list_agents'],
});

export const revokeAgent = defineAction({
  id: 'fleet.revoke_agent',
  tool: 'revoke_agent',
  risk: 'destructive',
  level: 3,
  runsOn: 'broker',
  collector: null,
  title: 'Revoke agents',
  description: "Revokes the targeted agents' certificates: streams close; they return only by enrolling anew.",
  input: z
    .object({
      host: z.string().min(1).optional().describe('Name or id.'),
      hosts: z.array(z.string().min(1)).min(1).optional().describe('Names or ids.'),
      selector: z.string().min(1).max(512).optional(),
      reason: z.string().max(500).optional(),
      confirm: z.boolean().optional().describe('Must be true to revoke.'),
    })
    .strict(),
  output: z.object({ revoked: z.array(z.object({ host: z.string(), id: z.string(), certificates: z.number() })) }),
  idempotent: true,
  resources: { kind: 'host' },
  related: ['fleet.list_agents'],
});
