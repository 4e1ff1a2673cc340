import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { pluralOf } from '../../format/plural-of.ts';
import { digestShape, rowShape } from '../index-shapes.ts';
import { RESOURCE_TYPES } from '../resource-types.ts';

const plural = RESOURCE_TYPES.map(pluralOf);

export const find = defineAction({
  id: 'fleet.find',
  tool: 'find',
  risk: 'read',
  level: 0,
  runsOn: 'broker',
  collector: null,
  title: 'Find resources',
  description: "Finds resources of any type in the broker's index: with type it lists that type, else searches all.",
  input: z
    .object({
      type: z
        .enum([...RESOURCE_TYPES, ...plural] as [string, ...string[]])
        .optional()
        .describe('One type (singular or plural).'),
      query: z.string().max(256).optional().describe('Text in the name or id.'),
      state: z.string().max(64).optional(),
      stack: z.string().max(256).optional(),
      node: z.string().max(256).optional().describe('Node or host it runs on.'),
      image: z.string().max(512).optional().describe('Text in the image.'),
      label: z.string().max(512).optional().describe('key or key=value.'),
      limit: z.number().int().min(1).max(200).optional().describe('default 200 with type, else 3 per type'),
      offset: z.number().int().min(0).optional().describe('With a type: rows to skip.'),
      raw: z.boolean().optional().describe("With a type: add each row's untouched record."),
    })
    .strict(),
  output: z.object({
    rows: z.array(rowShape),
    total: z.number(),
    counts: z.record(z.string(), z.number()).optional().describe('Without type: matches per type.'),
    raw: z.array(z.unknown()).optional(),
  }),
  table: { list: 'rows', columns: ['type', 'name', 'state', 'detail', 'host', 'stack'], more: "describe with a row's type and id gives its every field." },
  widget: 'find-results',
  related: ['fleet.describe'],
  indexLinks: { list: 'rows' },
});

export const describe = defineAction({
  id: 'fleet.describe',
  tool: 'describe',
  risk: 'read',
  level: 0,
  runsOn: 'broker',
  collector: null,
  title: 'Describe a resource',
  description:
    'One resource (id or name) as a digest: state and why, related resources, details and, for services and containers, recent failures and restarts.',
  input: z
    .object({
      type: z.enum(RESOURCE_TYPES),
      id: z.string().min(1).max(256),
      raw: z.boolean().optional().describe('Add the untouched record under raw.'),
    })
    .strict(),
  output: digestShape.extend({ raw: z.unknown().optional() }),
  related: ['fleet.find', 'swarm.logs'],
  indexLinks: { more: true },
});

const pointShape = z.object({ t: z.number().describe('Unix ms at the start of the bucket.'), v: z.number().nullable() });

export const getMetrics = defineAction({
  id: 'fleet.metrics',
  tool: 'get_metrics',
  risk: 'read',
  level: 0,
  runsOn: 'broker',
  collector: null,
  title: 'Metrics',
  description: 'CPU, memory, disk or network history of a service, node, host, container, cluster or the fleet; with top, the busiest.',
  input: z
    .object({
      target: z.enum(['service', 'node', 'cluster', 'host', 'container', 'fleet']),
      id: z.string().max(256).optional().describe('Name or id (the cluster, for cluster).'),
      selector: z.string().max(512).optional(),
      metric: z.enum(['cpu', 'memory', 'disk', 'network']).optional().describe('default cpu'),
      range: z.enum(['1h', '6h', '24h', '7d']).optional().describe('default 1h'),
      top: z.number().int().min(1).max(10).optional().describe('Rank the top N.'),
      by: z.enum(['service', 'node', 'container']).optional(),
    })
    .strict(),
  output: z.object({
    target: z.string(),
    id: z.string().optional(),
    metric: z.string(),
    range: z.string(),
    unit: z.string().describe('percent (cpu, disk), bytes (memory) or bytes_per_second (network).'),
    percent_of: z.enum(['machine', 'one core']).optional().describe('cpu of hosts is of the machine (100 = all cores busy), of containers of one core.'),
    step_s: z.number(),
    series: z.array(
      z.object({
        name: z.string(),
        latest: z.number().nullable(),
        min: z.number().nullable(),
        average: z.number().nullable(),
        max: z.number().nullable(),
        trend: z.enum(['rising', 'falling', 'steady', 'unknown']).describe('The last third of the range against the first: a move of over 10 %.'),
        points: z.array(pointShape),
      }),
    ),
    ranking: z.array(z.object({ name: z.string(), value: z.number(), host: z.string().optional() })).optional(),
  }),
  table: {
    list: 'series',
    columns: ['name', 'latest', 'min', 'average', 'max', 'trend'],
    unit: { field: 'unit', columns: ['latest', 'min', 'average', 'max', 'value'] },
    legend:
      "Each series over the range, in the answer's unit: trend compares the last third of the range with the first (rising or falling by over 10 %, else steady; unknown with too few samples).",
  },
  widget: 'metrics-chart',
});

export const getRecommendations = defineAction({
  id: 'fleet.recommendations',
  tool: 'get_recommendations',
  risk: 'read',
  level: 0,
  runsOn: 'broker',
  collector: null,
  title: 'Recommendations',
  description:
    'What to fix in every cluster (missing healthchecks, limits or restart policies, single replicas, flaky services, full nodes, badly sized services), with severity and the fixing tool.',
  input: z.object({ severity: z.enum(['info', 'warning', 'critical']).optional() }).strict(),
  output: z.object({
    findings: z.array(
      z.object({
        severity: z.enum(['info', 'warning', 'critical']),
        category: z.string(),
        target: z.object({ type: z.string(), id: z.string(), name: z.string(), cluster: z.string().optional() }),
        rationale: z.string(),
        fix: z.object({ tool: z.string(), section: z.string().optional() }).optional(),
      }),
    ),
    totals: z.object({ info: z.number(), warning: z.number(), critical: z.number() }),
  }),
  table: { list: 'findings', columns: ['severity', 'category', 'target', 'rationale'] },
  widget: 'recommendations',
});
