import { z } from 'zod';

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
