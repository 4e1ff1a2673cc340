import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { healthTimeoutS, imageParam, projectParam, replacementShape, rollWaitsMs, serviceName } from './rollout-shapes.ts';

export const containerUpdateImage = defineAction({
  id: 'rollout.container_update_image',
  tool: 'container_update_image',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'rollout',
  title: 'Update a container image',
  description: 'Recreates a container or compose service on a new image, keeping its configuration; restores the old one if unhealthy.',
  input: z
    .object({
      name: z.string().min(1).max(256).optional().describe('Container name or id.'),
      project: projectParam.optional(),
      service: serviceName.optional(),
      image: imageParam.describe('New REPO:TAG, or :TAG to keep the repository.'),
      timeout_s: healthTimeoutS,
    })
    .strict(),
  output: z.object({
    status: z.enum(['updated', 'unchanged', 'rolled_back', 'failed']),
    image: z.string(),
    containers: z.array(replacementShape),
    count: z.number(),
    message: z.string(),
  }),
  resources: { kind: 'container', param: 'name' },
  table: { list: 'containers', columns: ['container', 'status', 'from_image', 'to_image', 'health', 'reason'] },
  waitsMs: rollWaitsMs,
  related: ['rollout.image_pull', 'rollout.compose_up'],
});
