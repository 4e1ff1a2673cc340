import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { PULL_TIMEOUT_S } from './rollout-head.ts';
import { healthTimeoutS, projectParam, pullTimeoutS, replacementShape, rollWaitsMs, serviceName } from './rollout-shapes.ts';

const services = z.array(serviceName).min(1).max(50).optional().describe('default: all of the project');

export const composePull = defineAction({
  id: 'rollout.compose_pull',
  tool: 'compose_pull',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'rollout',
  title: 'Pull a compose project',
  description: "Pulls a compose project's images with the host's registry login; compose_up applies them.",
  input: z.object({ project: projectParam, services, timeout_s: pullTimeoutS }).strict(),
  output: z.object({
    project: z.string(),
    images: z.array(
      z.object({
        image: z.string(),
        services: z.array(z.string()),
        status: z.enum(['pulled', 'up_to_date', 'failed']),
        id: z.string().nullable(),
        reason: z.string().nullable(),
      }),
    ),
    count: z.number(),
    message: z.string(),
  }),
  idempotent: true,
  openWorld: true,
  table: { list: 'images', columns: ['image', 'services', 'status', 'id', 'reason'] },
  waitsMs: (params) => (params.timeout_s ?? PULL_TIMEOUT_S) * 1000,
  related: ['rollout.compose_up'],
});

export const composeUp = defineAction({
  id: 'rollout.compose_up',
  tool: 'compose_up',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'rollout',
  title: 'Bring a compose project up',
  description: "Starts a compose project's stopped containers and recreates those whose tag has a newer image, one by one; a failing one is restored.",
  input: z.object({ project: projectParam, services, timeout_s: healthTimeoutS }).strict(),
  output: z.object({
    project: z.string(),
    status: z.enum(['up_to_date', 'updated', 'rolled_back', 'failed']),
    containers: z.array(replacementShape),
    count: z.number(),
    message: z.string(),
  }),
  table: { list: 'containers', columns: ['container', 'status', 'from_image', 'to_image', 'health', 'reason'] },
  waitsMs: rollWaitsMs,
  related: ['rollout.compose_pull', 'rollout.compose_down'],
});

export const composeDown = defineAction({
  id: 'rollout.compose_down',
  tool: 'compose_down',
  risk: 'destructive',
  level: 2,
  runsOn: 'host',
  collector: 'rollout',
  title: 'Take a compose project down',
  description: 'Stops and removes the containers and networks of a compose project, keeping its volumes; its compose file brings it back.',
  input: z.object({ project: projectParam }).strict(),
  output: z.object({
    project: z.string(),
    containers_removed: z.array(z.string()),
    networks_removed: z.array(z.string()),
    volumes_kept: z.array(z.string()),
  }),
  idempotent: true,
  table: { columns: ['project', 'containers_removed', 'networks_removed', 'volumes_kept'] },
  waitsMs: () => 30_000,
});
