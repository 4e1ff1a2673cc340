import { z } from 'zod';

/** Cetacean's compact shapes, keys in snake_case as everywhere in fleetmesh. */

/**
 * Every type find and describe know, in the order find lists them, with where
 * its name is unique: `host` types live on one engine and are named
 * `HOST/NAME` (grants and find use that form), `fleet` types are named alone.
 */
const RESOURCE_SCOPES = {
  host: 'fleet',
  container: 'host',
  sandbox: 'host',
  service: 'fleet',
  task: 'fleet',
  node: 'fleet',
  stack: 'fleet',
  config: 'fleet',
  secret: 'fleet',
  network: 'fleet',
  volume: 'fleet',
  guest: 'fleet',
} as const satisfies Record<string, 'host' | 'fleet'>;

export type ResourceType = keyof typeof RESOURCE_SCOPES;
export const RESOURCE_TYPES = Object.keys(RESOURCE_SCOPES) as [ResourceType, ...ResourceType[]];
/** The types whose resources are named `HOST/NAME`. */
export const HOST_SCOPED_TYPES: readonly ResourceType[] = RESOURCE_TYPES.filter((type) => RESOURCE_SCOPES[type] === 'host');

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
  cluster: z.string().optional().describe('The swarm it belongs to, or for guests the Proxmox VE cluster.'),
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
  reason: z.string().optional().describe('The cause Swarm gave for a non-healthy state.'),
  since_unix_ms: z.number().nullable().describe('When the current state began.'),
  details: z.record(z.string(), z.unknown()),
  related: z.array(relatedShape),
  recent_failures: z
    .array(failureShape)
    .describe(
      "Services: the task failures behind a failing state; containers: non-zero exits and OOM kills (task is the container's name). Newest first, at most 5.",
    ),
  restarts: z
    .object({ last_hour: z.number(), last_week: z.number() })
    .optional()
    .describe('Services: involuntary task terminations; containers: starts that followed an exit.'),
  host: z.string().optional(),
  cluster: z.string().optional(),
});

/** Where a converging mutation left a service (Cetacean's summary). */
export const serviceSummaryShape = z.object({
  id: z.string(),
  name: z.string(),
  image: z.string(),
  mode: z.enum(['replicated', 'global', 'replicated-job', 'global-job']),
  replicas: z.number().optional().describe('Omitted for a global service.'),
  running: z.number(),
  state: z.string(),
  version: z.number().describe('The Swarm version index, for a caller doing its own concurrency checks.'),
  converged: z.boolean(),
});

/** Which swarm answered and through which manager agent (added by the broker). */
export const clusterRefShape = z.object({
  id: z.string(),
  name: z.string(),
  manager: z.string().describe('The agent (on a manager node) that answered.'),
});

export const clusterParam = z
  .string()
  .min(1)
  .max(128)
  .optional()
  .describe(
    'The swarm: its id (or a prefix) or the name its operator gave it. Needed only when the fleet holds several swarms and the resource does not tell which.',
  );
