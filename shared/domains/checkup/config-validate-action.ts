import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { configIssueShape } from '../../options/config-check.ts';

export const configValidate = defineAction({
  id: 'checkup.config_validate',
  tool: 'config_validate',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'checkup',
  title: 'Validate the config file',
  description: "Checks the agent's --config file with line numbers: unknown keys, wrong types, conflicts, unreadable secret files.",
  input: z.object({ strict: z.boolean().optional().describe('Warnings fail too.') }).strict(),
  output: z.object({
    file: z.string().nullable().describe('The config file checked; null when the agent runs without one.'),
    valid: z.boolean(),
    error_count: z.number(),
    warning_count: z.number(),
    issues: z.array(configIssueShape),
  }),
  table: { list: 'issues', columns: ['severity', 'code', 'key', 'line', 'message'] },
});
