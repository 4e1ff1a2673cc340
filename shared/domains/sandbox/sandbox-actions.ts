import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';

const sandboxId = z.string().min(1).max(256);
const sandboxResources = { kind: 'sandbox', param: 'sandbox_id', locate: true } as const;

const sandboxNodeShape = z.object({
  sandbox_id: z.string(),
  lifecycle_state: z.string().describe('ready, starting, paused or stopped, from its container.'),
  availability: z.enum(['available', 'partial', 'unavailable']),
  sampled_at_unix_ms: z.number(),
  errors: z.array(z.object({ code: z.string(), message: z.string() })),
  container: z.string(),
  daemon: z.object({ daemon_pid: z.number().nullable(), runtime_dir: z.string() }),
  resources: z.object({ latest: z.record(z.string(), z.unknown()).nullable(), history: z.array(z.record(z.string(), z.unknown())) }),
  workspaces: z.array(z.object({ workspace_id: z.string(), last_sample_unix_ms: z.number(), metrics: z.record(z.string(), z.unknown()) })),
  stack: z.object({ layer_count: z.number().nullable(), layers_bytes: z.number().nullable(), active_leases: z.number().nullable() }),
  telemetry: z
    .object({ records: z.number(), dropped_oversized: z.number(), dropped_malformed: z.number() })
    .describe('What the agent read of the telemetry log, and what it had to drop.'),
});

export const snapshot = defineAction({
  id: 'sandbox.snapshot',
  tool: 'snapshot',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'sandbox',
  title: 'Sandbox snapshot',
  description: 'Start here for sandboxes: live state of every ready sandbox on the targeted hosts, or of one with sandbox_id.',
  input: z.object({ sandbox_id: z.string().min(1).max(256).optional() }).strict(),
  // Fleet-wide, each host answers {sandboxes: [...]}; for one sandbox_id, the sandbox's own node shape.
  output: sandboxNodeShape.partial().extend({ sandboxes: z.array(sandboxNodeShape).optional() }),
  resources: { kind: 'sandbox', param: 'sandbox_id', locate: true, lists: [{ field: 'sandboxes', name: 'sandbox_id' }] },
  table: { list: 'sandboxes', columns: ['sandbox_id', 'lifecycle_state', 'availability', 'container'] },
});

const spanShape = z.object({
  ts: z.number(),
  trace: z.string(),
  span: z.string(),
  parent: z.string().optional(),
  name: z.string(),
  dur_ms: z.number(),
  status: z.string(),
  attrs: z.record(z.string(), z.unknown()),
});

const eventShape = z.object({
  ts: z.number(),
  trace: z.string().optional(),
  parent: z.string().optional(),
  name: z.string(),
  attrs: z.record(z.string(), z.unknown()),
});

interface SpanNode {
  span: z.infer<typeof spanShape>;
  offset_ms: number;
  children: SpanNode[];
  events: z.infer<typeof eventShape>[];
}

const spanNodeShape: z.ZodType<SpanNode> = z.lazy(() =>
  z.object({ span: spanShape, offset_ms: z.number(), children: z.array(spanNodeShape), events: z.array(eventShape) }),
);

export const trace = defineAction({
  id: 'sandbox.trace',
  tool: 'trace',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'sandbox',
  title: 'Sandbox trace',
  description: "A sandbox's spans for one trace (default: the latest) as a waterfall.",
  input: z.object({ sandbox_id: sandboxId, trace_id: z.string().max(256).optional().describe('A trace id, or last (the default).') }).strict(),
  output: z.object({ view: z.literal('trace'), trace: z.string().nullable(), spans: z.array(spanNodeShape) }),
  resources: sandboxResources,
});

export const events = defineAction({
  id: 'sandbox.events',
  tool: 'events',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'sandbox',
  title: 'Sandbox events',
  description: "A sandbox's telemetry events, newest first, to follow into trace.",
  input: z
    .object({
      sandbox_id: sandboxId,
      name: z.string().max(256).optional().describe('Exact name, such as lease.acquired.'),
      since_ms: z.number().int().min(0).optional().describe('Unix ms.'),
      last_n: z.number().int().min(0).optional(),
    })
    .strict(),
  output: z.object({ view: z.literal('events'), events: z.array(eventShape) }),
  resources: sandboxResources,
  table: { list: 'events', columns: ['ts', 'name', 'trace', 'attrs'] },
});

export const cgroup = defineAction({
  id: 'sandbox.cgroup',
  tool: 'cgroup',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'sandbox',
  title: 'Sandbox resources',
  description: "A sandbox's CPU, memory and block-I/O counters over a window, or one workspace's samples.",
  input: z
    .object({
      sandbox_id: sandboxId,
      scope: z.string().max(256).optional().describe('sandbox (default) or a workspace id.'),
      window_ms: z.number().int().min(0).max(600_000).optional().describe('default 60000'),
    })
    .strict(),
  output: z.object({
    view: z.literal('cgroup'),
    scope: z.string(),
    series: z.array(
      z.object({
        ts: z.number(),
        sample_delta_ms: z.number().nullable(),
        metrics: z.record(z.string(), z.unknown()),
        deltas: z.record(z.string(), z.number()),
      }),
    ),
  }),
  resources: sandboxResources,
  table: { list: 'series', columns: ['ts', 'sample_delta_ms', 'metrics', 'deltas'] },
});

export const layerstack = defineAction({
  id: 'sandbox.layerstack',
  tool: 'layerstack',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'sandbox',
  title: 'Sandbox layer stack',
  description: "A sandbox's layer stack: layer sizes, which workspaces lease each, and the size trend.",
  input: z
    .object({
      sandbox_id: sandboxId,
      workspace_id: z.string().max(256).optional(),
      window_ms: z.number().int().min(0).max(600_000).optional().describe('default 60000'),
    })
    .strict(),
  // The stack view, or with workspace_id the workspace view ({view, workspace, mounts, upper_bytes}).
  output: z.object({
    view: z.literal('layerstack'),
    manifest_version: z.number().nullable().optional(),
    root_hash: z.string().nullable().optional(),
    active_lease_count: z.number().optional(),
    total_bytes: z.number().nullable().optional(),
    total_allocated_bytes: z.number().nullable().optional(),
    storage_logical_bytes: z.number().nullable().optional(),
    storage_allocated_bytes: z.number().nullable().optional(),
    staging_entry_count: z.number().nullable().optional(),
    layers: z
      .array(
        z.object({
          layer_id: z.string(),
          path: z.string(),
          bytes: z.number().nullable(),
          allocated_bytes: z.number().nullable(),
          leased_by_workspaces: z.number(),
          booked_by: z.array(z.string()),
        }),
      )
      .optional(),
    trend: z.array(z.object({ ts: z.number(), metrics: z.record(z.string(), z.unknown()) })).optional(),
    workspace: z.string().optional(),
    mounts: z.array(z.string()).optional(),
    upper_bytes: z.number().nullable().optional(),
  }),
  resources: sandboxResources,
});
