import { z } from 'zod';

/** Cetacean's compact shapes, keys in snake_case as everywhere in fleetmesh. */

/** One entry in a list, as find returns it. */
export const rowShape = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  stack: z.string().optional(),
  state: z.string().optional(),
  detail: z.string().optional().describe("The most identifying secondary fact: a service's image, a node's role, a network's driver…"),
  desired: z.number().optional(),
  running: z.number().optional(),
  host: z.string().optional().describe('The agent the resource lives on (containers, volumes, sandboxes) or that reported it (guests).'),
  cluster: z.string().optional().describe("The cluster it belongs to, such as a service's or a guest's."),
});

const relatedShape = z.object({
  type: z.string(),
  id: z.string(),
  name: z.string(),
  relation: z.string().optional().describe('How it relates: runs_on, task_of, uses, member_of…'),
  host: z.string().optional(),
});

const failureShape = z.object({
  task: z.string(),
  task_id: z.string(),
  node: z.string(),
  state: z.string(),
  error: z.string(),
  exit_code: z.number().nullable(),
  timestamp_unix_ms: z.number(),
});

/** The detail view of one resource, as describe returns it. */
export const digestShape = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  state: z.string(),
  reason: z.string().optional().describe('The cause given for a non-healthy state.'),
  since_unix_ms: z.number().nullable().describe('When the current state began.'),
  details: z.record(z.string(), z.unknown()),
  related: z.array(relatedShape),
  recent_failures: z
    .array(failureShape)
    .describe(
      "Services: the task failures behind a failing state; containers: non-zero exits and OOM kills (task is the container's name). Newest first, at most 5.",
    ),
  restarts: z
    .object({ last_hour: z.number(), last_week: z.number(), engine_count: z.number().optional() })
    .optional()
    .describe("Services: involuntary task terminations; containers: starts that followed an exit, and engine_count, the engine's own count."),
  host: z.string().optional(),
  cluster: z.string().optional(),
});
