import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { PULL_TIMEOUT_S } from './rollout-head.ts';
import { imageParam, pullTimeoutS } from './rollout-shapes.ts';

export const imagePull = defineAction({
  id: 'rollout.image_pull',
  tool: 'image_pull',
  risk: 'write',
  level: 1,
  runsOn: 'host',
  collector: 'rollout',
  title: 'Pull an image',
  description: "Pulls an image with the login in each host's own Docker config, which never leaves the host.",
  input: z.object({ image: imageParam.describe('REPO:TAG or REGISTRY/REPO:TAG'), timeout_s: pullTimeoutS }).strict(),
  output: z.object({
    image: z.string(),
    registry: z.string(),
    status: z.enum(['pulled', 'up_to_date']),
    id: z.string(),
    previous_id: z.string().nullable().describe('The image the tag named before; null when new to the host.'),
    digest: z.string().nullable(),
    size_bytes: z.number(),
    credentials: z.string().nullable().describe("Where the host's login came from (Docker config or credential helper); null: anonymous."),
  }),
  idempotent: true,
  openWorld: true,
  table: { columns: ['image', 'status', 'id', 'size_bytes', 'credentials'] },
  waitsMs: (params) => (params.timeout_s ?? PULL_TIMEOUT_S) * 1000,
  related: ['rollout.container_update_image', 'rollout.compose_pull'],
});

const imageRow = z.object({
  id: z.string(),
  tags: z.array(z.string()),
  size_bytes: z.number(),
  created_unix_ms: z.number(),
  containers: z.number().describe('Containers (running or not) made from it.'),
  dangling: z.boolean().describe('No tag names it.'),
});

export const imageList = defineAction({
  id: 'rollout.image_list',
  tool: 'image_list',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'rollout',
  title: 'List images',
  description: 'The images on each host, newest first: tags, size, how many containers use each.',
  input: z
    .object({
      reference: z.string().min(1).max(512).optional().describe('Repository or REPO:TAG, * allowed.'),
      dangling: z.boolean().optional(),
    })
    .strict(),
  output: z.object({ images: z.array(imageRow), count: z.number(), total_size_bytes: z.number() }),
  table: { list: 'images', columns: ['tags', 'id', 'size_bytes', 'containers', 'created_unix_ms'] },
});

export const imagePrune = defineAction({
  id: 'rollout.image_prune',
  tool: 'image_prune',
  risk: 'destructive',
  level: 2,
  runsOn: 'host',
  collector: 'rollout',
  title: 'Prune images',
  description: 'Deletes unused images: untagged ones, or every unused one with all (a rollback to one then needs a pull).',
  input: z
    .object({
      all: z.boolean().optional(),
      label: z.string().min(1).max(512).optional().describe('Only images with this label: key or key=value.'),
    })
    .strict(),
  output: z.object({
    deleted: z.array(z.string()).describe('Image ids.'),
    untagged: z.array(z.string()),
    count: z.number(),
    space_reclaimed_bytes: z.number(),
  }),
  idempotent: true,
  table: { columns: ['count', 'space_reclaimed_bytes', 'untagged'] },
  related: ['rollout.image_list'],
});
