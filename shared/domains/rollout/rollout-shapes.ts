import { z } from 'zod';
import { HEALTH_TIMEOUT_S, PULL_TIMEOUT_S } from './rollout-head.ts';

/** An image reference as a parameter; the agent checks it by the engine's own rules. */
export const imageParam = z.string().min(1).max(512);

/** A compose project as its containers' `com.docker.compose.project` label names it. */
export const projectParam = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9][a-z0-9_-]*$/)
  .describe('Its com.docker.compose.project label.');

export const serviceName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/);

/** How long a pull may take by design, in seconds. */
export const pullTimeoutS = z.number().int().min(10).max(3600).optional().describe('default 300');
/** How long a new container may take to be healthy, in seconds. */
export const healthTimeoutS = z.number().int().min(5).max(600).optional().describe('Health wait per container, default 60 s');

/**
 * What a roll-forward may take by design: a pull of the new image, then each
 * container's health wait and, when it fails, the previous container's.
 */
export const rollWaitsMs = (params: { timeout_s?: number | undefined }) => (PULL_TIMEOUT_S + 2 * (params.timeout_s ?? HEALTH_TIMEOUT_S)) * 1000;

/** One container a roll-forward went through, and where it ended. */
export const replacementShape = z.object({
  container: z.string(),
  service: z.string().nullable().describe('Its compose service; null outside a project.'),
  from_image: z.string(),
  to_image: z.string(),
  status: z
    .enum(['updated', 'started', 'unchanged', 'rolled_back', 'failed', 'skipped'])
    .describe('rolled_back: the new container failed and the previous one runs again on from_image.'),
  health: z.string().nullable().describe('healthy, unhealthy or starting; null without a health check.'),
  reason: z.string().nullable().describe('Why it rolled back, failed or was skipped.'),
});

export type Replacement = z.infer<typeof replacementShape>;
