import { z } from 'zod';
import { ERROR_CODES } from '../errors/fleet-error.ts';

/** An error as results carry it (DESIGN §5). */
const errorShape = z.object({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  hint: z.string(),
  host: z.string().optional(),
  collector: z.string().optional(),
});

const availabilityShape = z.enum(['available', 'partial', 'unavailable']);

/** The fields every host's answer has, beside the action's own. */
const nodeShape = {
  host: z.string().describe('The agent name.'),
  availability: availabilityShape.describe(
    'available: everything collected; partial: some collectors failed; unavailable: no answer. An absent collector (nothing to collect there) is no failure.',
  ),
  sampled_at_unix_ms: z.number(),
  failed_collectors: z.array(z.string()),
  errors: z.array(errorShape),
  absent_collectors: z
    .array(z.string())
    .optional()
    .describe(
      "Collectors with nothing to collect on this host (no engine, not in a swarm, not configured): their part is empty, and that is no failure. In a fleet answer they are listed once, in the envelope's absent_collectors.",
    ),
};

/** Collectors absent on some hosts, listed once per fleet answer. */
export const absentCollectorsShape = z
  .array(z.object({ collector: z.string(), hosts: z.array(z.string()) }))
  .describe(
    'Collectors with nothing to collect on these hosts (no engine, not in a swarm, not configured): not a failure, and the hosts answer nothing for them.',
  );

/** The shape of one host's answer to an action whose own fields are `output`. */
export function nodeSchema<O extends z.ZodObject>(output: O) {
  // An unavailable host has none of the action's fields.
  return output.partial().extend(nodeShape);
}

/** The shape of a fleet answer: one node per targeted host, sorted by host. */
export function envelopeSchema<O extends z.ZodObject>(output: O) {
  return z.object({
    schema_version: z.literal(1),
    targeted: z.number().describe('How many hosts the call was sent to.'),
    responded: z.number().describe('How many of them answered.'),
    hosts: z.array(nodeSchema(output)),
    errors: z.array(errorShape).describe("Every per-host failure, with its host; with error_counts, those of this page's hosts."),
    error_counts: z
      .record(z.string(), z.number())
      .optional()
      .describe("Present when the failures were too many to come with every page: the whole call's failures by code."),
    absent_collectors: absentCollectorsShape.optional(),
    page: z
      .object({ number: z.number(), of: z.number(), first_host: z.string(), last_host: z.string() })
      .optional()
      .describe('Present when the hosts did not fit in one result: which page of hosts this is.'),
    next_cursor: z.string().optional().describe('Pass as cursor, with the same arguments, for the next page.'),
  });
}

/** What a refused or failed call returns as structured content: the error, and for confirm_required the targets. */
export const errorResultShape = z.object({
  error: errorShape
    .extend({
      closest: z.array(z.string()).optional().describe('The nearest valid names, when a name was not found.'),
      accepted: z.array(z.string()).optional(),
      required: z.array(z.string()).optional(),
    })
    .loose(),
  targets: z
    .array(z.object({ host: z.string(), resource: z.string().optional() }))
    .optional()
    .describe('What a destructive call would hit (confirm_required).'),
});
