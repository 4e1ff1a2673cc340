import { readFileSync } from 'node:fs';
import type { configValidate } from '../../../shared/domains/checkup/config-validate-action.ts';
import { parseCommandLine } from '../../../shared/options/command-line.ts';
import { type ConfigIssue, checkConfigText } from '../../../shared/options/config-check.ts';
import { AGENT_COMMAND, resolveAgentOptions } from '../../agent-options.ts';
import type { ActionHandler } from '../../dispatcher/dispatcher.ts';

/** config_validate: the agent's --config file as it is on disk now, checked against the agent's flags and its own start checks. */
export function createConfigValidateHandler(configPath: string | undefined): ActionHandler<typeof configValidate> {
  return async (params) => {
    if (configPath === undefined) return { payload: { file: null, valid: true, error_count: 0, warning_count: 0, issues: [] } };
    let issues: ConfigIssue[];
    try {
      const text = readFileSync(configPath, 'utf8');
      issues = checkConfigText(text, {
        flags: AGENT_COMMAND.flags,
        resolve: () => resolveAgentOptions(parseCommandLine(AGENT_COMMAND, ['--config', configPath], {}).values),
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      issues = [
        {
          code: 'unreadable_file',
          severity: 'error',
          key: null,
          line: null,
          message: `${configPath} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'error'})`}`,
        },
      ];
    }
    const errors = issues.filter((issue) => issue.severity === 'error').length;
    const warnings = issues.length - errors;
    return {
      payload: { file: configPath, valid: errors === 0 && (!params.strict || warnings === 0), error_count: errors, warning_count: warnings, issues },
    };
  };
}
