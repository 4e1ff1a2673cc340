import { z } from 'zod';
import { defineAction } from '../action.ts';

const sandboxId = z.string().min(1).max(256).describe('Target sandbox id (selects the daemon to query).');
const sandboxResources = { kind: 'sandbox', param: 'sandbox_id', locate: true } as const;

export const sandboxNodeShape = z.object({
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
  description:
    'Live state of sandboxes. Without sandbox_id: every ready sandbox on every targeted host, each with availability and an errors array for what could not be read. With sandbox_id: that one sandbox (the broker finds its host). Start here, then narrow with trace, events, cgroup or layerstack.',
  input: z.object({ sandbox_id: z.string().min(1).max(256).optional().describe('Optional target sandbox id. Without it, every ready sandbox.') }).strict(),
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
  description:
    "Folds a sandbox's telemetry into a span waterfall for one trace: a forest of spans with their offsets from the trace start, children and events. trace_id is an exact trace id, or last (the default) for the most recently started root trace. An unknown trace is not an error: spans is empty.",
  input: z
    .object({ sandbox_id: sandboxId, trace_id: z.string().max(256).optional().describe("Trace id to render, or 'last' for the most recent root trace.") })
    .strict(),
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
  description:
    "A sandbox's telemetry events, newest first: filter by exact name (such as lease.acquired), since_ms, and keep the last_n newest. Each carries trace and parent ids to follow into trace.",
  input: z
    .object({
      sandbox_id: sandboxId,
      name: z.string().max(256).optional().describe('Only events with this exact name (e.g. lease.acquired).'),
      since_ms: z.number().int().min(0).optional().describe('Only events at or after this unix-ms timestamp.'),
      last_n: z.number().int().min(0).optional().describe('Keep only the N newest matched events.'),
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
  description:
    "Resource counters of a sandbox over a window: scope sandbox (the default) reads the engine's CPU, memory and block-I/O counters of its container; a workspace id as scope reads the daemon's samples for that workspace. Deltas appear when a prior sample exists in the window.",
  input: z
    .object({
      sandbox_id: sandboxId,
      scope: z.string().max(256).optional().describe("Resource scope: 'sandbox' or a workspace id."),
      window_ms: z.number().int().min(0).max(600_000).optional().describe('Lookback window in milliseconds (default 60000, max 600000).'),
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
  description:
    "The sandbox's active LayerStack manifest in order: layer sizes where known, which workspaces lease each layer, and the trend of the stack's size over the window. With workspace_id: that workspace's lower layers and private upper dir.",
  input: z
    .object({
      sandbox_id: sandboxId,
      workspace_id: z.string().max(256).optional().describe("Show one workspace's lower layers and private upperdir."),
      window_ms: z.number().int().min(0).max(600_000).optional().describe('Lookback window for the trend (default 60000, max 600000).'),
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
