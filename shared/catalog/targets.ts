import { z } from 'zod';

/** The longest a fan-out may wait for its hosts (DESIGN §5). */
const MAX_TIMEOUT_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * How a host action names the agents it runs on. They are added by the broker
 * to every host action's input; the agents never see them.
 */
export const hostTargetShape = {
  host: z.string().min(1).optional().describe("One agent, by name or id. The answer is that host's result alone."),
  server: z.string().min(1).optional().describe('Alias of host, as homebutler names it.'),
  hosts: z.array(z.string().min(1)).min(1).max(1000).optional().describe('Several agents, by name or id.'),
  selector: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .describe('Agents whose labels match, such as role=db,env!=dev (k=v, k!=v, k for "has k", !k for "lacks k"; commas mean AND).'),
  timeout_ms: z
    .number()
    .int()
    .min(100)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(
      `How long to wait for the hosts, in ms (default ${DEFAULT_TIMEOUT_MS}, max ${MAX_TIMEOUT_MS}); a host not answering by then is reported as deadline_exceeded.`,
    ),
  cursor: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .describe('The next_cursor of a read too large for one result: the same call with it answers the next page of hosts.'),
};

export const TARGET_KEYS = ['host', 'server', 'hosts', 'selector', 'timeout_ms', 'cursor'] as const;

export const confirmShape = {
  confirm: z
    .boolean()
    .optional()
    .describe('Must be true for this destructive action to run; without it nothing changes and the answer lists what would be hit.'),
};
