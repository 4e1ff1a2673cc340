import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';

/** What is wrong with a config key: a vocabulary, to branch on. */
const CONFIG_ISSUE_CODES = [
  'yaml_syntax',
  'not_a_mapping',
  'unknown_key',
  'wrong_type',
  'duplicate_key',
  'conflicting_keys',
  'unreadable_file',
  'loose_file_mode',
] as const;

export const configIssueShape = z.object({
  code: z.enum(CONFIG_ISSUE_CODES),
  severity: z.enum(['error', 'warning']),
  key: z.string().nullable(),
  line: z.number().nullable().describe('1-based line in the file; null when the issue is about the whole file.'),
  message: z.string(),
});

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
